// dsclient: a small CLI over Microsoft.Diagnostics.NETCore.Client that talks to a
// .NET diagnostic endpoint the way dotnet-trace, dotnet-counters and dotnet-dump do.
// It exists so the dsroute interop tests can drive a real runtime through the router
// with the real client library. See ../README.md.
//
// Output is line-oriented and stable so shell tests can grep it. Every failure prints
// one line "dsclient: error: ..." on stderr and exits non-zero; a global watchdog
// bounds the run time (exit 3).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DsClient;

internal sealed class UsageException : Exception
{
    public UsageException(string m) : base(m) { }
}

internal static class Program
{
    private const string Usage =
@"usage: dsclient [--timeout SEC] (--port PATH,connect | --port PATH | --pid PID) COMMAND [+ COMMAND ...]
  --port PATH,connect   connect to a listening diagnostic socket (like --diagnostic-port PATH,connect)
  --port PATH           listen mode: reversed server at PATH, wait for a runtime to connect
  --pid PID             the default diagnostic socket of process PID
  --timeout SEC         watchdog for the whole run (default 60, plus the --seconds of trace/counters)
COMMAND:
  processinfo                         pid=N cookie=GUID cmdline=...
  resume                              ResumeRuntime; prints ok
  env                                 ProcessEnvironment; prints env count=N then NAME=value lines
  trace --seconds N --out FILE [--no-rundown] [--resume] [--buffer-mb N]
                                      EventPipe session (runtime GC keywords + Dsroute-Test), stream to FILE
  counters --seconds N [--resume]     System.Runtime EventCounters, parsed live
  dump --type mini|heap|triage|full --path FILE
                                      GenerateCoreDump (WriteDump)
  dsclient parse FILE                 count events in a nettrace file (no endpoint)
Several commands can be chained with a lone '+' (one client, one runtime): e.g.
  dsclient --port /tmp/p processinfo + resume";

    private static int Main(string[] args)
    {
        try
        {
            return Run(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"dsclient: error: {e.Message}");
            Console.Error.WriteLine(Usage);
            return 2;
        }
        catch (Exception e)
        {
            Fail(e);
            return 1;
        }
    }

    internal static void Fail(Exception e)
    {
        while (e is AggregateException ae && ae.InnerExceptions.Count == 1)
            e = ae.InnerExceptions[0];
        if (e is TargetInvocationException tie && tie.InnerException != null)
            e = tie.InnerException;
        string msg = e.Message.Replace('\n', ' ').Replace('\r', ' ');
        Console.Error.WriteLine($"dsclient: error: {e.GetType().Name} hresult=0x{e.HResult:X8}{ServerHresult(e)}: {msg}");
    }

    // The library reports the runtime's (or router's) error frame only inside the
    // message ("... failed - HRESULT: 0x80070005."); surface it as a field.
    internal static string ServerHresult(Exception e)
    {
        var m = System.Text.RegularExpressions.Regex.Match(e.Message, @"HRESULT: (0x[0-9A-Fa-f]{8})");
        return m.Success ? $" server-hresult={"0x" + m.Groups[1].Value.Substring(2).ToUpperInvariant()}" : "";
    }

    private sealed class Command
    {
        public string Name = "";
        public Dictionary<string, string?> Opts = new();
        public int Seconds => Opts.TryGetValue("--seconds", out var s) && s != null ? int.Parse(s) : 0;
    }

    private static readonly Dictionary<string, string[]> KnownOpts = new()
    {
        ["processinfo"] = Array.Empty<string>(),
        ["resume"] = Array.Empty<string>(),
        ["env"] = Array.Empty<string>(),
        ["trace"] = new[] { "--seconds=", "--out=", "--no-rundown", "--resume", "--buffer-mb=" },
        ["counters"] = new[] { "--seconds=", "--resume" },
        ["dump"] = new[] { "--type=", "--path=" },
    };

    private static int Run(string[] args)
    {
        string? port = null;
        int? pid = null;
        double timeoutSec = 60;
        int i = 0;
        for (; i < args.Length; i++)
        {
            string a = args[i];
            if (a == "-h" || a == "--help") { Console.WriteLine(Usage); return 0; }
            if (!a.StartsWith("--", StringComparison.Ordinal)) break;
            if (i + 1 >= args.Length) throw new UsageException($"{a} needs a value");
            string v = args[++i];
            switch (a)
            {
                case "--port": port = v; break;
                case "--pid":
                    if (!int.TryParse(v, out int p) || p <= 0) throw new UsageException("--pid needs a positive integer");
                    pid = p; break;
                case "--timeout":
                    if (!double.TryParse(v, System.Globalization.NumberStyles.Float,
                            System.Globalization.CultureInfo.InvariantCulture, out timeoutSec) || timeoutSec <= 0)
                        throw new UsageException("--timeout needs a positive number");
                    break;
                default: throw new UsageException($"unknown option {a}");
            }
        }
        if (i < args.Length && args[i] == "parse")
        {
            // Offline: count the events in a nettrace file; no endpoint needed.
            if (i + 2 != args.Length) throw new UsageException("usage: dsclient parse FILE");
            var (t, d, g, f) = CountEvents(args[i + 1]);
            Console.WriteLine($"events total={t} dsroute-test={d} gc={g} first-tick={Tick(f)}");
            return 0;
        }
        if ((port == null) == (pid == null)) throw new UsageException("give exactly one of --port or --pid");

        var cmds = new List<Command>();
        Command? cur = null;
        for (; i < args.Length; i++)
        {
            string a = args[i];
            if (a == "+") { cur = null; continue; }
            if (cur == null)
            {
                if (!KnownOpts.ContainsKey(a)) throw new UsageException($"unknown command '{a}'");
                cur = new Command { Name = a };
                cmds.Add(cur);
                continue;
            }
            string[] known = KnownOpts[cur.Name];
            if (known.Contains(a + "="))
            {
                if (i + 1 >= args.Length) throw new UsageException($"{a} needs a value");
                cur.Opts[a] = args[++i];
            }
            else if (known.Contains(a)) cur.Opts[a] = null;
            else throw new UsageException($"unknown argument '{a}' for {cur.Name}");
        }
        if (cmds.Count == 0) throw new UsageException("no command");
        foreach (var c in cmds)
        {
            if (c.Name is "trace" or "counters")
            {
                if (!c.Opts.TryGetValue("--seconds", out var s) || !int.TryParse(s, out int n) || n < 0)
                    throw new UsageException($"{c.Name} needs --seconds N");
                timeoutSec += n;
            }
            if (c.Name == "trace" && !c.Opts.ContainsKey("--out")) throw new UsageException("trace needs --out FILE");
            if (c.Name == "dump" && (!c.Opts.ContainsKey("--type") || !c.Opts.ContainsKey("--path")))
                throw new UsageException("dump needs --type and --path");
            if (c.Opts.TryGetValue("--buffer-mb", out var b) && (!int.TryParse(b, out int mb) || mb <= 0))
                throw new UsageException("--buffer-mb needs a positive integer");
        }

        StartWatchdog(timeoutSec);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(timeoutSec));
        return RunAsync(port, pid, cmds, cts.Token).GetAwaiter().GetResult();
    }

    private static void StartWatchdog(double seconds)
    {
        // Last line of defence: some library calls are synchronous and ignore tokens.
        var t = new Thread(() =>
        {
            Thread.Sleep(TimeSpan.FromSeconds(seconds + 5));
            Console.Error.WriteLine($"dsclient: error: timed out after {seconds + 5:0.#} s");
            Console.Error.Flush();
            Environment.Exit(3);
        }) { IsBackground = true, Name = "watchdog" };
        t.Start();
    }

    private static async Task<int> RunAsync(string? port, int? pid, List<Command> cmds, CancellationToken ct)
    {
        DiagnosticsClientConnector? connector = null;
        DiagnosticsClient client;
        try
        {
            if (pid != null)
            {
                client = new DiagnosticsClient(pid.Value);
            }
            else
            {
                bool listen = !port!.EndsWith(",connect", StringComparison.OrdinalIgnoreCase);
                if (listen)
                {
                    string path = port.EndsWith(",listen", StringComparison.OrdinalIgnoreCase)
                        ? port[..^",listen".Length] : port;
                    RemoveStaleSocket(Path.GetFullPath(path));
                    Console.Error.WriteLine($"dsclient: listening on {Path.GetFullPath(path)}");
                }
                connector = await DiagnosticsClientConnector.FromDiagnosticPort(port, ct).ConfigureAwait(false);
                if (connector == null)
                    throw new TimeoutException("no runtime connected before the timeout");
                client = connector.Instance;
                if (listen) Console.Error.WriteLine("dsclient: runtime connected");
            }

            foreach (var c in cmds)
            {
                int rc = await RunCommand(client, c, ct).ConfigureAwait(false);
                if (rc != 0) return rc;
            }
            return 0;
        }
        finally
        {
            if (connector != null)
            {
                var d = connector.DisposeAsync().AsTask();
                await Task.WhenAny(d, Task.Delay(5000)).ConfigureAwait(false);
            }
        }
    }

    private static void RemoveStaleSocket(string path)
    {
        if (!File.Exists(path)) return;
        using var s = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            s.Connect(new UnixDomainSocketEndPoint(path));
        }
        catch (SocketException)
        {
            File.Delete(path);
            return;
        }
        throw new IOException($"{path} exists and something is listening on it");
    }

    private static async Task<int> RunCommand(DiagnosticsClient client, Command c, CancellationToken ct)
    {
        switch (c.Name)
        {
            case "processinfo": return ProcessInfo(client);
            case "resume":
                client.ResumeRuntime();
                Console.WriteLine("ok");
                return 0;
            case "env":
            {
                var env = client.GetProcessEnvironment();
                Console.WriteLine($"env count={env.Count}");
                foreach (var kv in env.OrderBy(k => k.Key, StringComparer.Ordinal))
                    Console.WriteLine($"{kv.Key}={kv.Value}");
                return 0;
            }
            case "trace": return await Trace(client, c, ct).ConfigureAwait(false);
            case "counters": return await Counters(client, c, ct).ConfigureAwait(false);
            case "dump": return Dump(client, c);
        }
        throw new UsageException($"unknown command {c.Name}");
    }

    // GetProcessInfo is internal in the package (the shipped tools see it through
    // InternalsVisibleTo); reach it by reflection. It tries ProcessInfo3, 2, then 1.
    private static int ProcessInfo(DiagnosticsClient client)
    {
        var m = typeof(DiagnosticsClient).GetMethod("GetProcessInfo",
            BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public, Type.EmptyTypes)
            ?? throw new MissingMethodException("DiagnosticsClient.GetProcessInfo not found in this package version");
        object info = m.Invoke(client, null) ?? throw new InvalidDataException("GetProcessInfo returned null");
        string Get(string name)
        {
            var p = info.GetType().GetProperty(name, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
            return p?.GetValue(info)?.ToString() ?? "";
        }
        Console.WriteLine($"pid={Get("ProcessId")} cookie={Get("RuntimeInstanceCookie")} cmdline={Get("CommandLine")}");
        Console.WriteLine($"os={Get("OperatingSystem")} arch={Get("ProcessArchitecture")} " +
                          $"entrypoint={Get("ManagedEntrypointAssemblyName")} clr={Get("ClrProductVersionString")} " +
                          $"rid={Get("PortableRuntimeIdentifier")}");
        return 0;
    }

    private static int Dump(DiagnosticsClient client, Command c)
    {
        DumpType type = c.Opts["--type"] switch
        {
            "mini" or "normal" => DumpType.Normal,
            "heap" => DumpType.WithHeap,
            "triage" => DumpType.Triage,
            "full" => DumpType.Full,
            var t => throw new UsageException($"unknown dump type '{t}'"),
        };
        string path = c.Opts["--path"]!;
        try
        {
            client.WriteDump(type, path, WriteDumpFlags.None);
        }
        catch (Exception e)
        {
            Console.WriteLine($"dump failed: {e.GetType().Name} hresult=0x{e.HResult:X8}{ServerHresult(e)} message={e.Message.Replace('\n', ' ')}");
            Fail(e);
            return 1;
        }
        long len = File.Exists(path) ? new FileInfo(path).Length : -1;
        Console.WriteLine($"dump ok path={path} bytes={len}");
        return 0;
    }

    private static List<EventPipeProvider> TraceProviders() => new()
    {
        // GC keyword (0x1) at Informational, as dotnet-trace's gc-collect-ish profiles do.
        new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, 0x1),
        new EventPipeProvider("Dsroute-Test", EventLevel.Verbose, -1),
    };

    private static async Task<EventPipeSession> StartSession(DiagnosticsClient client, List<EventPipeProvider> providers,
        bool rundown, int bufferMb, CancellationToken ct)
    {
        return await client.StartEventPipeSessionAsync(providers, rundown, bufferMb, ct).ConfigureAwait(false);
    }

    private static async Task<int> Trace(DiagnosticsClient client, Command c, CancellationToken ct)
    {
        int seconds = c.Seconds;
        string outPath = c.Opts["--out"]!;
        bool rundown = !c.Opts.ContainsKey("--no-rundown");
        int bufferMb = c.Opts.TryGetValue("--buffer-mb", out var b) && b != null ? int.Parse(b) : 64;
        var sw = Stopwatch.StartNew();

        using var session = await StartSession(client, TraceProviders(), rundown, bufferMb, ct).ConfigureAwait(false);
        Console.Error.WriteLine($"dsclient: session started after {sw.ElapsedMilliseconds} ms");
        long eofAt = -1;
        long bytes = 0;
        var first = new byte[8];
        int firstLen = 0;
        Task copy;
        await using (var file = new FileStream(outPath, FileMode.Create, FileAccess.Write, FileShare.Read))
        {
            Stream stream = session.EventStream;
            copy = Task.Run(async () =>
            {
                var buf = new byte[64 * 1024];
                while (true)
                {
                    int n = await stream.ReadAsync(buf, 0, buf.Length, ct).ConfigureAwait(false);
                    if (n <= 0) break;
                    if (firstLen < 8)
                    {
                        int k = Math.Min(8 - firstLen, n);
                        Array.Copy(buf, 0, first, firstLen, k);
                        firstLen += k;
                    }
                    await file.WriteAsync(buf.AsMemory(0, n), ct).ConfigureAwait(false);
                    Interlocked.Add(ref bytes, n);
                }
                eofAt = sw.ElapsedMilliseconds;
            }, ct);

            if (c.Opts.ContainsKey("--resume"))
            {
                client.ResumeRuntime();
                Console.Error.WriteLine("dsclient: resumed runtime");
            }

            var wait = Task.Delay(TimeSpan.FromSeconds(seconds), ct);
            var done = await Task.WhenAny(wait, copy).ConfigureAwait(false);
            if (done == copy)
            {
                await copy.ConfigureAwait(false); // propagate a read error
                throw new EndOfStreamException($"trace stream ended early after {Interlocked.Read(ref bytes)} bytes");
            }
            await wait.ConfigureAwait(false);

            long stopSent = sw.ElapsedMilliseconds;
            await session.StopAsync(ct).ConfigureAwait(false);
            long stopReplied = sw.ElapsedMilliseconds;
            await copy.WaitAsync(TimeSpan.FromSeconds(30), ct).ConfigureAwait(false);
            await file.FlushAsync(ct).ConfigureAwait(false);
            Console.Error.WriteLine($"dsclient: stop sent at {stopSent} ms, stop reply at {stopReplied} ms, stream EOF at {eofAt} ms");
        }

        bool magic = firstLen == 8 && Encoding.ASCII.GetString(first) == "Nettrace";
        Console.WriteLine($"trace bytes={bytes} nettrace={(magic ? "yes" : "no")}");
        if (!magic) return 1;

        var (total, test, gc, firstTick) = CountEvents(outPath);
        Console.WriteLine($"events total={total} dsroute-test={test} gc={gc} first-tick={Tick(firstTick)}");
        return 0;
    }

    private static string Tick(long n) => n < 0 ? "-" : n.ToString(System.Globalization.CultureInfo.InvariantCulture);

    private static (long total, long test, long gc, long firstTick) CountEvents(string path)
    {
        long total = 0, test = 0, gc = 0, firstTick = -1;
        using var source = new EventPipeEventSource(path);
        var hist = new SortedDictionary<string, long>(StringComparer.Ordinal);
        bool debug = Environment.GetEnvironmentVariable("DSCLIENT_DEBUG") == "1";
        void Count(TraceEvent e)
        {
            total++;
            if (debug) { string k = $"{e.ProviderName}/{e.EventName}"; hist[k] = hist.GetValueOrDefault(k) + 1; }
            if (e.ProviderName == "Dsroute-Test")
            {
                test++;
                // Tick's payload counts from 1 when Main starts: the lowest
                // one seen tells whether the trace began before Main.
                if (e.EventName == "Tick" && e.PayloadNames.Length > 0)
                {
                    long n = Convert.ToInt64(e.PayloadValue(0), System.Globalization.CultureInfo.InvariantCulture);
                    if (firstTick < 0 || n < firstTick) firstTick = n;
                }
            }
            else if (e.ProviderName == "Microsoft-Windows-DotNETRuntime" &&
                     (e.EventName?.StartsWith("GC", StringComparison.Ordinal) ?? false)) gc++;
        }
        // Parsers only decode events someone subscribed to: runtime events through the
        // CLR parser, EventSource events (self-describing metadata) through Dynamic.
        source.Clr.All += Count;
        source.Dynamic.All += Count;
        source.UnhandledEvents += Count;
        source.Process();
        foreach (var kv in hist) Console.Error.WriteLine($"dsclient: event {kv.Key} x{kv.Value}");
        return (total, test, gc, firstTick);
    }

    private static async Task<int> Counters(DiagnosticsClient client, Command c, CancellationToken ct)
    {
        int seconds = c.Seconds;
        var providers = new List<EventPipeProvider>
        {
            new("System.Runtime", EventLevel.Verbose, 0xffffffff,
                new Dictionary<string, string> { ["EventCounterIntervalSec"] = "1" }),
        };
        using var session = await StartSession(client, providers, false, 16, ct).ConfigureAwait(false);
        var names = new SortedDictionary<string, string>(StringComparer.Ordinal);
        long samples = 0;
        var source = new EventPipeEventSource(session.EventStream);
        bool debug = Environment.GetEnvironmentVariable("DSCLIENT_DEBUG") == "1";
        source.Dynamic.All += e =>
        {
            if (debug) Console.Error.WriteLine($"dsclient: event {e.ProviderName}/{e.EventName}");
            if (e.EventName != "EventCounters") return;
            // The single field is the counter payload struct. TraceEvent 4.0 hands it
            // back as {"Payload": {...}} under an empty field name, so take it by
            // position and unwrap one level if needed.
            object? payload = e.PayloadNames.Length > 0 ? e.PayloadValue(0) : null;
            if (payload is IDictionary<string, object> outer && !outer.ContainsKey("Name") &&
                outer.TryGetValue("Payload", out var inner))
                payload = inner;
            if (payload is IDictionary<string, object> p &&
                p.TryGetValue("Name", out var n) && n != null)
            {
                Interlocked.Increment(ref samples);
                object? v = p.TryGetValue("Mean", out var mean) ? mean : p.TryGetValue("Increment", out var inc) ? inc : null;
                lock (names) names[n.ToString()!] = Convert.ToString(v, System.Globalization.CultureInfo.InvariantCulture) ?? "";
            }
        };
        var process = Task.Run(() => source.Process(), ct);
        if (c.Opts.ContainsKey("--resume")) client.ResumeRuntime();
        await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(seconds), ct), process).ConfigureAwait(false);
        await session.StopAsync(ct).ConfigureAwait(false);
        await process.WaitAsync(TimeSpan.FromSeconds(30), ct).ConfigureAwait(false);
        source.Dispose();
        lock (names)
        {
            Console.WriteLine($"counters samples={samples} names={names.Count}");
            foreach (var kv in names) Console.WriteLine($"counter {kv.Key}={kv.Value}");
        }
        return samples > 0 ? 0 : 1;
    }
}
