// Handed to emcc with --pre-js (dswasm.csproj).  The runtime pack's
// JavaScript expects the module factory of emscripten 3.1.56; Debian's 3.1.69
// renamed _scriptDir to _scriptName and dropped Module.ready in favour of the
// factory's own promise.  This runs inside the factory, where both names
// are in scope, and puts back what the runtime uses: _scriptDir, and a
// Module.ready that reads and replaces that promise.
var _scriptDir = typeof _scriptName !== 'undefined' ? _scriptName : undefined;
Object.defineProperty(Module, 'ready', {
  configurable: true,
  enumerable: true,
  get() { return readyPromise; },
  set(p) { readyPromise = p; },
});
