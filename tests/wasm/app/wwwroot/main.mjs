// SPDX-License-Identifier: ISC
//
// Starts dswasm under Node or in a page.  Where the runtime dials comes
// from DOTNET_DiagnosticPorts: Node's environment, or the page's query
// (index.html?DOTNET_DiagnosticPorts=ws://127.0.0.1:8088/diagnostics);
// DSWASM_SECONDS and DSWASM_NAME likewise.  Unset, the app opens no
// diagnostic port.
import { dotnet } from './_framework/dotnet.js';

const node = typeof process === 'object' && process.versions?.node;
const setting = (name) => node ? process.env[name]
    : new URLSearchParams(globalThis.location.search).get(name);

let app = dotnet;
for (const name of ['DOTNET_DiagnosticPorts', 'DSWASM_SECONDS', 'DSWASM_NAME']) {
  const value = setting(name);
  if (value)
    app = app.withEnvironmentVariable(name, value);
}
const { runMain } = await app.create();
const status = await runMain();
console.log(`dswasm: exit status ${status}`);
if (node)
  process.exit(status);
