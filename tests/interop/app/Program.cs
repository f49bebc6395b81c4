// dsapp: a tiny .NET target for dsroute interop tests.
//
// It emits a "Dsroute-Test" EventSource event every ~10 ms (payload: a
// running counter), counts the same ticks on a "Dsroute.Test" Meter
// (dsapp.ticks, for dotnet-counters), keeps 64 DsApp.Retained objects alive
// (for dotnet-gcdump and dotnet-dump to name), and allocates a few KiB per
// iteration so the GC runs.
// It prints "dsapp pid=<pid> ready" once Main runs user code, which a test
// can use to tell that a suspended runtime has been resumed.
//
//   dsapp [--seconds N] [--exit-after-ms N] [--interval-ms N] [--quiet]
//         [--exit-code N]
//
// Without --seconds/--exit-after-ms it runs until SIGTERM/SIGINT and then
// exits 0 (or --exit-code's N) after printing "dsapp pid=<pid> exiting
// count=<n>".
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Runtime.InteropServices;
using System.Threading;

namespace DsApp;

[EventSource(Name = "Dsroute-Test")]
internal sealed class DsrouteTestSource : EventSource
{
    public static readonly DsrouteTestSource Log = new DsrouteTestSource();

    private DsrouteTestSource() { }

    [Event(1, Level = EventLevel.Informational, Message = "tick {0}")]
    public void Tick(long counter)
    {
        if (IsEnabled())
            WriteEvent(1, counter);
    }

    [Event(2, Level = EventLevel.Verbose, Message = "allocated {0} bytes")]
    public void Allocated(long bytes)
    {
        if (IsEnabled(EventLevel.Verbose, EventKeywords.All))
            WriteEvent(2, bytes);
    }
}

// Objects of the app's own type on the heap, for the heap tools to name.
internal sealed class Retained
{
    public readonly long Id;
    public readonly byte[] Payload = new byte[256];

    public Retained(long id) { Id = id; }
}

internal static class Program
{
    private static readonly Meter AppMeter = new Meter("Dsroute.Test");
    private static readonly Counter<long> Ticks =
        AppMeter.CreateCounter<long>("dsapp.ticks", "{tick}", "Iterations of the main loop");
    private static readonly List<Retained> Kept = new List<Retained>();

    private static int Usage(string msg)
    {
        Console.Error.WriteLine($"dsapp: {msg}");
        Console.Error.WriteLine("usage: dsapp [--seconds N] [--exit-after-ms N] [--interval-ms N] [--quiet] [--exit-code N]");
        return 2;
    }

    private static int Main(string[] args)
    {
        long runMs = -1;
        int intervalMs = 10;
        int exitCode = 0;
        bool quiet = false;
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            string? next = i + 1 < args.Length ? args[i + 1] : null;
            switch (a)
            {
                case "--seconds":
                    if (next == null || !double.TryParse(next, System.Globalization.NumberStyles.Float,
                            System.Globalization.CultureInfo.InvariantCulture, out double s) || s < 0)
                        return Usage("--seconds needs a non-negative number");
                    runMs = (long)(s * 1000); i++; break;
                case "--exit-after-ms":
                    if (next == null || !long.TryParse(next, out long ms) || ms < 0)
                        return Usage("--exit-after-ms needs a non-negative integer");
                    runMs = ms; i++; break;
                case "--interval-ms":
                    if (next == null || !int.TryParse(next, out intervalMs) || intervalMs < 0)
                        return Usage("--interval-ms needs a non-negative integer");
                    i++; break;
                case "--quiet":
                    quiet = true; break;
                case "--exit-code":
                    if (next == null || !int.TryParse(next, out exitCode) || exitCode < 0 || exitCode > 255)
                        return Usage("--exit-code needs an integer from 0 to 255");
                    i++; break;
                case "-h":
                case "--help":
                    Usage("help"); return 0;
                default:
                    return Usage($"unknown argument '{a}'");
            }
        }

        int pid = Environment.ProcessId;
        using var stop = new ManualResetEventSlim(false);
        // Handle SIGTERM/SIGINT ourselves so the process exits 0 with a final line.
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop.Set(); });
        using var intr = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop.Set(); });

        for (int i = 0; i < 64; i++)
            Kept.Add(new Retained(i));
        Console.Out.WriteLine($"dsapp pid={pid} ready");
        Console.Out.Flush();

        var sw = Stopwatch.StartNew();
        long counter = 0;
        long sink = 0;
        var keep = new byte[16][];
        while (!stop.IsSet)
        {
            if (runMs >= 0 && sw.ElapsedMilliseconds >= runMs)
                break;
            counter++;
            DsrouteTestSource.Log.Tick(counter);
            Ticks.Add(1);
            // A few KiB per iteration, some kept a little longer, so gen0 GCs happen.
            for (int k = 0; k < 4; k++)
            {
                var buf = new byte[2048 + (int)(counter % 7) * 512];
                buf[0] = (byte)counter;
                sink += buf.Length;
                keep[(counter * 4 + k) % keep.Length] = buf;
            }
            // Larger bursts (~25 MB/s at the default interval) so gen0 GCs happen
            // several times a second and any short trace contains GC events.
            for (int k = 0; k < 4; k++)
            {
                var big = new byte[64 * 1024];
                big[k] = 1;
                sink += big.Length;
                keep[(counter + k) % keep.Length] = big;
            }
            if (counter % 100 == 0)
                DsrouteTestSource.Log.Allocated(sink);
            if (intervalMs > 0)
                stop.Wait(intervalMs);
        }

        if (!quiet)
            Console.Out.WriteLine($"dsapp pid={pid} exiting count={counter}");
        Console.Out.Flush();
        GC.KeepAlive(keep);
        GC.KeepAlive(Kept);
        return exitCode;
    }
}
