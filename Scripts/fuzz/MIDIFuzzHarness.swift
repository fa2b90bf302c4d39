// libFuzzer entry point for the MIDI reader, compiled together with Sources/MIDIParse
// by Scripts/fuzz-midi. Each input is parsed in all three modes; on success the merged view,
// the hits and the tempo map are exercised too, and the writer round-trips the hits. The
// hit reader (FileHits.parse) must agree with the full model in every mode.
// Any crash, overflow trap, hang (-timeout) or runaway allocation (-rss_limit_mb,
// -malloc_limit_mb) is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func midiFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for mode in MIDIParseMode.allCases {
        var settings = HitExtractionSettings()
        settings.parseMode = mode
        let fast = Result { try FileHits.parse(bytes, path: "fuzz", settings: settings) }
        let full = Result { () throws -> FileHits in
            let (f, w) = try MIDIFile.parse(bytes, path: "fuzz", mode: mode)
            return try FileHits(file: f, path: "fuzz", settings: settings, warnings: w)
        }
        switch (fast, full) {
        case (.success(let a), .success(let b)): if a != b { fatalError("hit reader differs from the full model") }
        case (.failure(let a), .failure(let b)): if "\(a)" != "\(b)" { fatalError("hit reader fails differently") }
        default: fatalError("hit reader and full model disagree on success")
        }
        do {
            let (file, warnings) = try MIDIFile.parse(bytes, path: "fuzz", mode: mode)
            if mode == .strict && !warnings.isEmpty { fatalError("strict mode returned warnings") }
            let merged = file.mergedEvents()
            let hits = file.hits()
            let map = file.tempoMap
            if let last = merged.last {
                let q = map.quarterNotes(atTick: last.tick)
                let s = map.seconds(atTick: last.tick)
                if q.isNaN || s.isNaN { fatalError("tempo map gave NaN") }
            }
            for w in warnings { _ = w.description }
            // Round trip: hits written with the writer and read back give the same hits.
            if case .ppq(let ppq) = file.division, hits.count < 2000, (hits.last?.tick ?? 0) < 0x0FFF_FFF0 {
                let notes = hits.map { MIDINote(tick: $0.tick, note: $0.note, velocity: $0.velocity, channel: $0.channel, duration: 1) }
                let written = try MIDIWriter.format0(ppq: ppq, notes: notes)
                let back = try MIDIFile.parse(written, path: "roundtrip", mode: .strict).file.hits()
                var seen = Set<[Int]>()
                let unique = hits.filter { seen.insert([$0.tick, Int($0.channel), Int($0.note)]).inserted }
                if Set(back) != Set(unique) || back.count != unique.count { fatalError("writer round trip differs") }
            }
        } catch let e as MIDIFileError {
            _ = e.description
        } catch let e as MIDIWriteError {
            _ = e.description
        } catch {
            fatalError("unexpected error type \(error)")
        }
    }
    return 0
}
