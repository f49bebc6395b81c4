// SPDX-License-Identifier: ISC
//
// dswasm: stays alive for DSWASM_SECONDS (60) and writes an event of its own
// EventSource, Dsroute-Wasm, four times a second.  Each Tick carries the
// app's DSWASM_NAME, so a trace shows which runtime it came from.

using System;
using System.Diagnostics.Tracing;
using System.Threading.Tasks;

int seconds = 60;
if (int.TryParse(Environment.GetEnvironmentVariable("DSWASM_SECONDS"), out var s))
    seconds = s;
string name = Environment.GetEnvironmentVariable("DSWASM_NAME") ?? "dswasm";
Console.WriteLine($"{name} ready: runtime {Environment.Version}, " +
    "DOTNET_DiagnosticPorts=" +
    (Environment.GetEnvironmentVariable("DOTNET_DiagnosticPorts") ?? ""));
for (int i = 0; i < seconds * 4; i++)
{
    DsWasmSource.Log.Tick(i, name);
    await Task.Delay(250);
}
Console.WriteLine($"{name} exiting");
return 0;

[EventSource(Name = "Dsroute-Wasm")]
sealed class DsWasmSource : EventSource
{
    public static readonly DsWasmSource Log = new();

    [Event(1, Level = EventLevel.Informational)]
    public void Tick(int n, string name) => WriteEvent(1, n, name);
}
