// The one owner of a CJackLive player (a JACK client, its two MIDI ports, its process callback
// and rings): opened with libjack loaded at run time, closed in deinit.
import CJackLive

public enum LiveError: Error, CustomStringConvertible, Equatable {
    /// libjack.so.0 could not be loaded (the sentence names it and its Debian package).
    case library(String)
    /// jack_client_open, jack_port_register or jack_activate failed.
    case client(String)
    /// jack_connect failed.
    case connect(String)
    /// The server shut the client down, or stopped running its cycles.
    case serverGone(String)
    /// --answer reads what it hears as grid steps: a grid model only.
    case answerNeedsGrid

    public var description: String {
        switch self {
        case .library(let s), .client(let s), .connect(let s): return s
        case .serverGone(let s): return "the JACK server went away mid-play (\(s)): stopped"
        case .answerNeedsGrid: return "--answer needs a grid model (the shipped groove is one): a 2017-layout model cannot read what it hears"
        }
    }
}

/// Calls a C function that writes a sentence into an error buffer on failure.
private func withErrorBuffer<T>(_ body: (UnsafeMutablePointer<CChar>, Int) -> T) -> (T, String) {
    var buffer = [CChar](repeating: 0, count: 512)
    let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return (result, text)
}

public final class JackMIDIClient {
    private let handle: OpaquePointer
    public let sampleRate: Int
    public let bufferSize: Int

    /// Loads libjack (LiveError.library when it is missing) and opens a client named `name` on
    /// `server` (nil: JACK_DEFAULT_SERVER, else the default), not yet active.
    public init(name: String, server: String?, ppq: Int, barTicks: Int, bpm: Double, followTransport: Bool) throws {
        let (loaded, loadError) = withErrorBuffer { drummer_live_load_library($0, $1) }
        guard loaded == 0 else { throw LiveError.library(loadError) }
        let (opened, openError) = withErrorBuffer { buf, size -> OpaquePointer? in
            if let server {
                return drummer_live_open(name, server, Int32(ppq), Int32(barTicks), bpm, followTransport ? 1 : 0, buf, size)
            }
            return drummer_live_open(name, nil, Int32(ppq), Int32(barTicks), bpm, followTransport ? 1 : 0, buf, size)
        }
        guard let opened else { throw LiveError.client(openError) }
        handle = opened
        sampleRate = Int(drummer_live_sample_rate(opened))
        bufferSize = Int(drummer_live_buffer_size(opened))
    }

    deinit { drummer_live_close(handle) }

    public func activate() throws {
        let (r, e) = withErrorBuffer { drummer_live_activate(handle, $0, $1) }
        guard r == 0 else { throw LiveError.client(e) }
    }

    /// Connects the output port to `port` (output: true) or `port` to the input port.
    public func connect(_ port: String, output: Bool) throws {
        let (r, e) = withErrorBuffer { drummer_live_connect(handle, port, output ? 1 : 0, $0, $1) }
        guard r == 0 else { throw LiveError.connect(e) }
    }

    public func portName(output: Bool) -> String {
        drummer_live_port_name(handle, output ? 1 : 0).map { String(cString: $0) } ?? ""
    }

    /// The course events are queued on (`changeCourse`).
    public private(set) var epoch: UInt32 = 0

    /// Queues an event (in tick order within a course); false when the ring is full.
    public func push(_ event: LiveEvent) -> Bool {
        var e = event.record
        e.epoch = epoch
        return drummer_live_push(handle, &e) == 1
    }

    /// Drops what is queued and not yet played (every sounding note ends in the next period);
    /// what is queued next may start earlier than what was dropped.
    public func changeCourse() {
        epoch &+= 1
        drummer_live_set_epoch(handle, epoch)
    }

    /// Whether the hits heard are also played on the output.
    public func setThru(_ on: Bool) { drummer_live_set_thru(handle, on ? 1 : 0) }

    /// The next hit heard, if any: (tick from the first bar line, note, velocity) and whether it
    /// also went out on the output (`setThru`).
    public func popHeard() -> (hit: (tick: Int, note: Int, velocity: Int), echoed: Bool)? {
        var h = drummer_live_heard()
        guard drummer_live_pop_heard(handle, &h) == 1 else { return nil }
        return ((Int(h.tick), Int(h.note), Int(h.velocity)), h.echoed != 0)
    }

    public func start() { drummer_live_start(handle) }
    public func stop() { drummer_live_stop(handle) }
    public var playhead: Double { drummer_live_playhead(handle) }
    public var firstBarFrame: Int64? {
        let f = drummer_live_first_bar_frame(handle)
        return f < 0 ? nil : f
    }
    public var finished: Bool { drummer_live_finished(handle) != 0 }

    /// Why the server shut the client down (nil while it runs).
    public var serverGone: String? {
        let (gone, reason) = withErrorBuffer { drummer_live_server_gone(handle, $0, $1) }
        return gone != 0 ? reason : nil
    }

    /// Gives the server up for `reason` (it runs no process cycle): closing then leaves the
    /// client rather than wait on libjack's calls, which a frozen server never answers.
    public func abandon(_ reason: String) { drummer_live_abandon(handle, reason) }

    public var status: drummer_live_status {
        var s = drummer_live_status()
        drummer_live_get_status(handle, &s)
        return s
    }

    /// SIGINT, SIGTERM and SIGHUP set a flag (read with `caughtSignal`) instead of ending the process.
    public static func catchSignals() { drummer_live_catch_signals() }
    public static var caughtSignal: Int32 { drummer_live_caught_signal() }
}
