// `drummer play`'s sampling side: the sampler draws on this thread, a bar ahead of the JACK
// clock, into the real-time half's output ring (CJackLive); it never runs in the process
// callback. The draws are `drummer sample`'s: the same Sampler calls with the same options and
// seed, so a performance holds the hits a file of that seed holds, each at the frame its tick
// maps to (ticks from the first bar line, at the clock's tempo).
//
// --answer K: listen K bars, then play K bars that carry on from the hits heard (read as
// `drummer sample --primer` reads a primer of those K bars: the same GridPrimer, style choice
// and seed), then listen again. Without it, hits heard take over (the queued notes dropped, the
// hits heard played through) until they stop; then the model carries on from the last two bars
// played, the same way.
import CJackLive
import DrummerCore
import Foundation
import MIDIParse
import Sample

/// What to play and where.
public struct LiveSettings {
    /// Tempo while JACK transport does not roll, quarter notes per minute.
    public var bpm: Double = 120
    /// Bars to play (nil: until stopped).
    public var bars: Int?
    /// --answer K (nil: play on).
    public var answerBars: Int?
    public var seed: UInt64 = 0
    /// The sampling options (temperatures) as `sample` resolves them, playing on its own and
    /// carrying on from hits heard (as `sample` with a primer); the style is set per draw.
    public var options = SamplingOptions()
    public var continuationOptions = SamplingOptions()
    /// --style's styles (nil: not given), and the one it names when it names one.
    public var givenStyles: [Int]?
    public var fixedStyle: Int?
    public var server: String?
    public var clientName = "drummer"
    /// Ports the output is connected to, and ports connected to the input.
    public var connect: [String] = []
    public var listen: [String] = []
    public var followTransport = true

    public init() {}
}

/// How a performance ended.
public enum LiveOutcome: Equatable {
    case played
    case interrupted(signal: Int32)
}

public final class LivePlayer {
    let sampler: Sampler
    let settings: LiveSettings
    let status: (String) -> Void
    let ppq: Int, barTicks: Int
    /// How far ahead of the clock the sampler draws: one bar.
    let aheadTicks: Double
    private var client: JackMIDIClient!
    private var started = false
    /// The smallest lead (ms between an event and the clock, at the clock's tempo then) at which
    /// an event was queued after the start.
    private var minLead = Double.infinity
    private var heardHits = 0, heardUnmapped = 0, skipped = 0
    private var answerLatencies: [Double] = []
    private var lastStatus = Date.distantPast, lastReported = ""
    private var lastPeriods: UInt64 = 0, lastPeriodsChange = Date(), announcedStart = false

    struct Stop: Error {}
    struct Interrupted: Error { let signal: Int32 }

    public init(sampler: Sampler, settings: LiveSettings, status: @escaping (String) -> Void) {
        self.sampler = sampler
        self.settings = settings
        self.status = status
        ppq = sampler.groups.ticksPerQuarter
        barTicks = Meter.common.barTicks(ppq: ppq)
        aheadTicks = Double(barTicks)
    }

    /// Plays until --bars are played, SIGINT, SIGTERM or SIGHUP (every sounding note off first), or the
    /// server goes away (LiveError.serverGone).
    public func run() throws -> LiveOutcome {
        if settings.answerBars != nil, sampler.groups.grid == nil { throw LiveError.answerNeedsGrid }
        JackMIDIClient.catchSignals()
        let client: JackMIDIClient
        do {
            client = try JackMIDIClient(name: settings.clientName, server: settings.server, ppq: ppq, barTicks: barTicks,
                                        bpm: settings.bpm, followTransport: settings.followTransport)
        } catch {
            // A server that does not answer holds jack_client_open until a signal ends the wait:
            // that is a stop by the signal, not a failure to open.
            let sig = JackMIDIClient.caughtSignal
            if sig != 0 {
                status("stopped by signal \(sig) while opening the JACK client (the server did not answer)")
                return .interrupted(signal: sig)
            }
            throw error
        }
        self.client = client
        try client.activate()
        for p in settings.connect { try client.connect(p, output: true) }
        for p in settings.listen { try client.connect(p, output: false) }
        status("playing on \(client.portName(output: true)), listening on \(client.portName(output: false)) "
            + "(\(client.sampleRate) Hz, \(client.bufferSize) frames a period); seed \(settings.seed)")
        do {
            if let k = settings.answerBars { try answer(bars: k) } else { try playOn() }
            try wait { client.finished }
            usleep(useconds_t(min(200_000, 3 * 1_000_000 * client.bufferSize / max(1, client.sampleRate))))
            report(final: true)
            return .played
        } catch let i as Interrupted {
            client.stop()
            // The note-offs go out in the next period (unless the server is gone too).
            let deadline = Date().addingTimeInterval(1)
            while !client.finished, client.serverGone == nil, Date() < deadline { usleep(1000) }
            usleep(useconds_t(min(200_000, 3 * 1_000_000 * client.bufferSize / max(1, client.sampleRate))))
            report(final: true)
            status("stopped by signal \(i.signal): every sounding note off")
            return .interrupted(signal: i.signal)
        }
    }

    // MARK: Playing on

    typealias Hit = (tick: Int, note: Int, velocity: Int)

    /// A hit heard while the model plays on (a grid model): the player takes it as the start of
    /// someone else's playing.
    struct Heard: Error { let hit: Hit }

    /// Where the model carries on from: a primer of the bars before `line`, its grid's start,
    /// and the tick before which nothing is played (that time has passed).
    struct Course {
        let primer: GridPrimer, beat: [BeatHit], gridStart: Int, from: Int
    }

    /// Own hits queued and hits heard, for the primer when the model carries on (the last bars).
    private var performance: [Hit] = []
    /// While it plays along: the first hit's tick.
    private var alongSince: Int?

    /// The model plays on its own (`sample`'s draw without a primer). With a grid model, hits
    /// heard take over: what it has queued is dropped and the hits heard go out as they come;
    /// once they stop (a beat past the bar line after the last one), it carries on from the
    /// last two bars played, as `sample --primer` of them would.
    private func playOn() throws {
        let endTick = settings.bars.map { $0 * barTicks }
        var course: Course?
        while true {
            do {
                try play(course, until: endTick)
                // The end is queued a bar ahead: hits heard in the last bar take over as in any
                // other, up to the last bar line.
                try wait(draining: { h in
                    if let endTick, h.tick < endTick { try self.takeOver(h) }
                }) { self.client.finished }
                return
            } catch let h as Heard {
                guard let next = try playAlong(from: h.hit, until: endTick) else { return }
                course = next
            }
        }
    }

    /// Throws Heard for a hit of the drum map while the model plays on (a grid model, not
    /// already playing along): it takes over.
    private func takeOver(_ h: Hit) throws {
        guard settings.answerBars == nil, alongSince == nil, sampler.groups.grid != nil, DrumClasses.of(note: h.note) != nil else { return }
        throw Heard(hit: h)
    }

    /// Draws from the start, or from `course`, until `endTick` (nil: on and on).
    private func play(_ course: Course?, until endTick: Int?) throws {
        var rng = SeededRNG(seed: settings.seed)
        let (options, why) = drawOptions(carryingOn: course?.beat, rng: &rng)
        if let course {
            status("bar \(course.from / barTicks + 1): carrying on from tick \(course.from)" + styleText(options.style, why: why))
        } else {
            announceStyle(options.style, why: why)
        }
        var stream = LiveNoteStream(maxDuration: max(1, ppq / 4))
        var tick = course.map { $0.gridStart + $0.primer.lastOnset } ?? 0
        let from = course?.from ?? 0
        let emit: (GeneratedHit) throws -> Void = { h in
            tick += h.hit.delta
            if let endTick, tick >= endTick { throw Stop() }
            // The next bar's downbeat played early is the next bar's (as sample --bars leaves it out).
            if let endTick, !h.drawn(before: endTick, soundingAt: tick) { return }
            guard tick >= from else { self.skipped += 1; return }
            try stream.hit(onset: tick, note: h.hit.note, velocity: h.hit.velocity) { try self.queue($0) }
            self.performance.append((tick, h.hit.note, h.hit.velocity))
            if self.performance.count > 4096 { self.performance.removeFirst(2048) }
        }
        do {
            if let course {
                try sampler.generate(count: 10_000_000, options: options, gridPrimer: course.primer, rng: &rng, emit: emit)
            } else {
                try sampler.generate(count: endTick == nil ? Int.max : 10_000_000, options: options, primer: [], rng: &rng, emit: emit)
            }
        } catch is Stop {}
        let lastOff = try stream.finish { try self.queue($0) } ?? 0
        try queue(.end(at: max(endTick ?? 0, lastOff)))
        if !started { startClock() }
    }

    /// Hits heard from `first` on go out as they come, until they stop; then the course to carry
    /// on (nil: the bars run out first, and the end is queued; the hits heard up to it go out).
    private func playAlong(from first: Hit, until endTick: Int?) throws -> Course? {
        guard let grid = sampler.groups.grid else {
            try queue(.end(at: endTick ?? Int(client.playhead)))
            return nil
        }
        client.changeCourse()
        client.setThru(true)
        alongSince = first.tick
        defer { alongSince = nil }
        // The first hit is heard already: it goes out at once (late by its detection), as do
        // those heard with it before the output took them.
        _ = client.push(LiveEvent(tick: first.tick, status: 0x99, data1: UInt8(first.note & 0x7F), data2: UInt8(first.velocity & 0x7F)))
        performance.removeAll { $0.tick >= first.tick }
        performance.append(first)
        status("bar \(first.tick / barTicks + 1): playing what it hears")
        var last = first.tick
        // The end goes in a beat before the last bar line, so that it goes out on that line; the
        // hits heard until then go out as they come (thru stays on to the end).
        let endQueuedAt = endTick.map { Double($0 - barTicks / 4) }
        try wait(draining: { h in
            guard DrumClasses.of(note: h.note) != nil else { return }
            self.performance.append(h)
            last = max(last, h.tick)
        }) {
            let done = self.client.playhead >= Double((last / self.barTicks + 1) * self.barTicks + self.barTicks / 4)
            return done || endQueuedAt.map { self.client.playhead >= $0 } ?? false
        }
        if let endTick, let endQueuedAt, client.playhead >= endQueuedAt {
            try queue(.end(at: endTick))
            return nil
        }
        client.setThru(false)
        // The two bars up to the bar line after the last hit, as a beat from their first bar line.
        let line = (last / barTicks + 1) * barTicks, start = line - 2 * barTicks
        let beat = self.beat(performance.filter { $0.tick >= start && $0.tick < line }, from: start)
        let primer = try GridPrimer(beat: beat, group: grid)
        // A sixteenth from now: the draw and the first notes' way to the callback.
        let from = Int(client.playhead) + grid.ticksPerStep
        return Course(primer: primer, beat: beat, gridStart: start + (beat[0].onset - beat[0].tickInBar), from: from)
    }

    // MARK: Answering

    private func answer(bars k: Int) throws {
        guard let grid = sampler.groups.grid else { throw LiveError.answerNeedsGrid }
        let window = k * barTicks
        let endTick = settings.bars.map { $0 * barTicks }
        startClock()
        var windowStart = 0, lastOff = 0
        while endTick.map({ windowStart < $0 }) ?? true {
            // --bars ends the performance wherever it falls: in the listening bars (nothing is
            // answered then) or in an answer (cut there).
            let listenEnd = min(windowStart + window, endTick ?? Int.max)
            status("bar \(windowStart / barTicks + 1): listening for \((listenEnd - windowStart) / barTicks) bar(s)")
            if let endTick, listenEnd >= endTick { break }
            var heard: [Hit] = []
            try wait(draining: { h in
                if h.tick >= windowStart, h.tick < listenEnd { heard.append(h) }
            }) { self.client.playhead >= Double(listenEnd) }
            let closed = Date()
            guard !heard.isEmpty else {
                windowStart = listenEnd
                continue
            }
            // The hits as a beat of K bars from windowStart.
            let beat = self.beat(heard, from: windowStart)
            let primer = try GridPrimer(beat: beat, group: grid)
            // Only notes outside the drum map: the model read nothing, so nothing was heard.
            guard primer.unmapped < beat.count else {
                status("bar \(listenEnd / barTicks + 1): \(heard.count) hit(s) heard, all outside the drum map: listening again")
                windowStart = listenEnd
                continue
            }
            var rng = SeededRNG(seed: settings.seed)
            let (options, why) = drawOptions(carryingOn: beat, rng: &rng)
            // Generated onsets count from the beat's first bar line (the first hit's).
            let gridStart = windowStart + (beat[0].onset - beat[0].tickInBar)
            let answerEnd = min(listenEnd + window, endTick ?? Int.max)
            var tick = gridStart + primer.lastOnset, first = true
            var stream = LiveNoteStream(maxDuration: max(1, ppq / 4))
            var line = "bar \(listenEnd / barTicks + 1): answering \(heard.count) hit(s) heard"
            if primer.unmapped > 0 { line += " (\(primer.unmapped) outside the drum map, not read)" }
            status(line + styleText(options.style, why: why))
            do {
                try sampler.generate(count: 10_000_000, options: options, gridPrimer: primer, rng: &rng) { h in
                    tick += h.hit.delta
                    if tick >= answerEnd { throw Stop() }
                    // The downbeat after the answer played early is the next window's (as sample --bars leaves it out).
                    if !h.drawn(before: answerEnd, soundingAt: tick) { return }
                    // What would carry on in the listening bars themselves is past: not played.
                    guard tick >= listenEnd else { self.skipped += 1; return }
                    if first {
                        first = false
                        self.answerLatencies.append(Date().timeIntervalSince(closed))
                    }
                    try stream.hit(onset: tick, note: h.hit.note, velocity: h.hit.velocity) { try self.queue($0) }
                }
            } catch is Stop {}
            lastOff = try stream.finish { try self.queue($0) } ?? lastOff
            windowStart = answerEnd
        }
        // The last note's NOTE OFF may fall past the last bar line, as in `sample`'s file.
        try queue(.end(at: max(endTick ?? windowStart, lastOff)))
    }

    /// Hits (any order) as a beat from the bar line at `start`, in onset order (hits of one
    /// onset in the order they came): what GridPrimer reads.
    private func beat(_ hits: [Hit], from start: Int) -> [BeatHit] {
        hits.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map { h in
            BeatHit(note: h.element.note, onset: h.element.tick - start, velocity: h.element.velocity,
                    tickInBar: (h.element.tick - start) % barTicks, barTicks: barTicks)
        }
    }

    /// A draw's options as `sample` sets them, the rng's first number drawing the style: playing
    /// on, the model's temperatures and --style's style, else the drawn one; carrying on from a
    /// beat heard, the continuation temperatures and --style's style, else the likeliest for the
    /// beat (among --style's: the call `sample --primer` makes). `why` says where the style came
    /// from, for the status line.
    private func drawOptions(carryingOn beat: [BeatHit]?, rng: inout SeededRNG) -> (options: SamplingOptions, why: String) {
        var options = beat == nil ? settings.options : settings.continuationOptions
        var fixed = settings.fixedStyle, why = fixed != nil ? "" : " (drawn)"
        if let beat, fixed == nil, let s = try? sampler.likeliestStyle(beat, among: settings.givenStyles) {
            fixed = s
            why = " (likeliest for what it heard)"
        }
        let drawn = sampler.drawStyle(rng: &rng, among: settings.givenStyles)
        options.style = drawn == nil ? nil : fixed ?? drawn
        return (options, why)
    }

    // MARK: The clock, the ring and the checks

    private func startClock() {
        client.start()
        started = true
    }

    /// Queues `e` once the clock is within a bar of it (starting the clock once a bar is drawn).
    private func queue(_ e: LiveEvent) throws {
        if !started, Double(e.tick) > aheadTicks { startClock() }
        if started {
            try wait(draining: takeOver) { Double(e.tick) <= self.client.playhead + self.aheadTicks }
        }
        while !client.push(e) { try check(); usleep(1000) }
        // How far ahead it drew (playing on: an answer's first notes are due as it is drawn).
        if started, !e.isEnd, settings.answerBars == nil {
            // In ms at the clock's tempo now (transport's when it follows transport).
            let fpt = client.status.frames_per_tick
            let msPerTick = fpt > 0 ? fpt * 1000 / Double(client.sampleRate) : 60_000 / (settings.bpm * Double(ppq))
            minLead = min(minLead, (Double(e.tick) - client.playhead) * msPerTick)
        }
    }

    /// Polls every millisecond until `done`, handing hits heard to `heard` (else counting them).
    private func wait(draining heard: ((tick: Int, note: Int, velocity: Int)) throws -> Void, until done: () -> Bool) throws {
        while true {
            while let (h, echoed) = client.popHeard() {
                heardHits += 1
                if DrumClasses.of(note: h.note) == nil { heardUnmapped += 1 }
                // Playing along, a hit heard before the output took the hits heard goes out now.
                if !echoed, DrumClasses.of(note: h.note) != nil, alongSince.map({ h.tick >= $0 }) ?? false {
                    _ = client.push(LiveEvent(tick: h.tick, status: 0x99, data1: UInt8(h.note & 0x7F), data2: UInt8(h.velocity & 0x7F)))
                }
                try heard(h)
            }
            if done() { return }
            try check()
            usleep(1000)
        }
    }

    private func wait(until done: () -> Bool) throws { try wait(draining: { _ in }, until: done) }

    /// Signals, the server, the status line.
    private func check() throws {
        let sig = JackMIDIClient.caughtSignal
        if sig != 0 { throw Interrupted(signal: sig) }
        if let reason = client.serverGone { throw LiveError.serverGone(reason) }
        if !announcedStart, let f = client.firstBarFrame {
            announcedStart = true
            status("bar 1 starts at frame \(f)")
        }
        let s = client.status
        if s.periods != lastPeriods {
            lastPeriods = s.periods
            lastPeriodsChange = Date()
        } else if Date().timeIntervalSince(lastPeriodsChange) > 3 {
            client.abandon("no process cycle for 3 s")
            throw LiveError.serverGone("no process cycle for 3 s")
        }
        report(final: false)
    }

    private func announceStyle(_ style: Int?, why: String) {
        let text = styleText(style, why: why)
        if !text.isEmpty { status("style" + text.dropFirst(", style".count)) }
    }

    private func styleText(_ style: Int?, why: String) -> String {
        guard let s = style, let names = sampler.groups.grid?.styles?.names, names.indices.contains(s) else { return "" }
        return ", style \(names[s])" + why
    }

    /// The status line: every second when something changed, and at the end.
    private func report(final: Bool) {
        guard final || Date().timeIntervalSince(lastStatus) >= 1 else { return }
        lastStatus = Date()
        let s = client.status
        var parts = ["\(s.written) MIDI events sent", "\(s.late) late", "\(s.xruns) xruns"]
        if s.paused != 0 { parts.append("waiting for transport") } else if s.transport != 0 { parts.append("on JACK transport") }
        var input = "heard \(heardHits) hits"
        if heardUnmapped > 0 { input += " (\(heardUnmapped) outside the drum map)" }
        var ignored: [String] = []
        if s.other_channel > 0 { ignored.append("\(s.other_channel) on other channels") }
        if s.sysex > 0 { ignored.append("\(s.sysex) sysex") }
        if s.malformed > 0 { ignored.append("\(s.malformed) truncated or malformed") }
        if s.other > 0 { ignored.append("\(s.other) other messages") }
        if s.dropped > 0 { ignored.append("\(s.dropped) dropped (flood or before the start)") }
        if !ignored.isEmpty { input += "; ignored " + ignored.joined(separator: ", ") }
        parts.append(input)
        if final {
            if minLead.isFinite {
                parts.append(String(format: "drew at least %.0f ms ahead", minLead))
            }
            if !answerLatencies.isEmpty {
                let worst = answerLatencies.max()! * 1000, mean = answerLatencies.reduce(0, +) / Double(answerLatencies.count) * 1000
                parts.append(String(format: "answers drawn %.0f ms (worst %.0f ms) after the listening bars", mean, worst))
            }
            // What a draw carrying on from hits heard put where time had passed: in the listening
            // bars (answering), or before it carried on once the hits heard stopped (playing on).
            if skipped > 0 {
                parts.append(settings.answerBars != nil ? "\(skipped) hit(s) carrying on inside the listening bars not played"
                                                        : "\(skipped) hit(s) carrying on from the hits heard not played (due before it carried on)")
            }
        }
        let line = (final ? "played: " : "status: ") + parts.joined(separator: ", ")
        guard final || line != lastReported else { return }
        lastReported = line
        status(line)
    }
}

