"""Independent reference for `drummer stats`' bar-structure figures, written from the definitions in
docs/report-and-stats.md, not from the Swift code. Reads MIDI with mido.

usage: bar_structure.py OUT.json --generated FILE... --reference FILE...
Every file must be 4/4 throughout at 480 PPQ (the Groove corpus's own), read unquantized, all
channels. Prints and writes the figures of both sides (stats --json's "bar_structure" keys).
Regenerate Tests/Fixtures/bar-structure/expected.json with:
  python3 Scripts/reference/bar_structure.py Tests/Fixtures/bar-structure/expected.json \
    --generated corpus/groove/drummer10/session1/*.mid --reference $(find corpus/groove/drummer4 -name '*.mid' | sort)
"""
import argparse, json, math, statistics, sys
import mido

# Magenta's 9 drum classes (note_seq DEFAULT_DRUM_TYPE_PITCHES with 22 and 26).
CLASSES = [[36, 35], [38, 27, 28, 31, 32, 33, 34, 37, 39, 40, 56, 65, 66, 75, 85],
           [42, 44, 54, 68, 69, 70, 71, 73, 78, 80, 22], [46, 67, 72, 74, 79, 81, 26],
           [45, 29, 41, 43, 61, 64, 84], [48, 47, 60, 63, 77, 86, 87], [50, 30, 62, 76, 83],
           [49, 52, 55, 57, 58], [51, 53, 59, 82]]
CLASS = {n: c for c, ns in enumerate(CLASSES) for n in ns}
FILL = {4, 5, 6, 7}
BAR, SIX = 1920, 120


def hits(path):
    m = mido.MidiFile(path)
    assert m.ticks_per_beat == 480, path
    out = []
    for track in m.tracks:
        t = 0
        for msg in track:
            t += msg.time
            if msg.type == 'time_signature':
                assert (msg.numerator, msg.denominator) == (4, 4), path
            if msg.type == 'note_on' and msg.velocity > 0:
                out.append((t, msg.note, msg.velocity))
    return sorted(out, key=lambda h: h[0])


def jaccard(a, b):
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def side(paths):
    s = dict(lag={1: [], 2: [], 4: [], 8: []}, patterns=[], fill=[], other=[], onsets=0, multi=0, vel=[],
             cls=[0] * 9, grid=[0] * 9, cls_vel=[[] for _ in range(9)], hat_sd=[], drift=[])
    for p in paths:
        h = hits(p)
        ticks = [t for t, _, _ in h]
        for t in sorted(set(ticks)):
            s['onsets'] += 1
            s['multi'] += ticks.count(t) >= 2
        s['vel'] += [v for _, _, v in h]
        first, last = ticks[0] // BAR, ticks[-1] // BAR
        placed = []
        for t, n, v in h:
            if n not in CLASS:
                continue
            c = CLASS[n]
            s['cls'][c] += 1
            s['cls_vel'][c].append(v)
            r = t % SIX
            s['grid'][c] += min(r, SIX - r) <= 15
            q = (t + SIX // 2) // SIX          # nearest sixteenth from the file's start
            placed.append((q // 16, q % 16, c, v))
        last = max([last] + [b for b, _, _, _ in placed])
        bars = {b: set() for b in range(first, last + 1)}
        count = {b: [0, 0] for b in range(first, last + 1)}
        vels = {b: [] for b in range(first, last + 1)}
        for b, k, c, v in placed:
            bars[b].add((c, k))
            count[b][0] += 1
            count[b][1] += c in FILL
            vels[b].append((c, v))
        # Touch: closed hi-hat (class 2) velocity s.d. in bars with 4+ of them; s.d. of the mean
        # velocity of bars with 4+ hits, in files with 4+ such bars (population s.d.).
        for b in vels:
            hat = [v for c, v in vels[b] if c == 2]
            if len(hat) >= 4:
                s['hat_sd'].append(statistics.pstdev(hat))
        means = [sum(v for _, v in vels[b]) / len(vels[b]) for b in vels if len(vels[b]) >= 4]
        if len(means) >= 4:
            s['drift'].append(statistics.pstdev(means))
        for lag in s['lag']:
            s['lag'][lag] += [jaccard(bars[b], bars[b + lag]) for b in range(first, last + 1 - lag)]
        w = -(-first // 16) * 16
        while w + 15 <= last:
            reps = []
            for b in range(w, w + 16):
                if all(jaccard(bars[b], r) < 0.8 for r in reps):
                    reps.append(bars[b])
            s['patterns'].append(len(reps))
            w += 16
        w = -(-first // 8) * 8
        while w + 7 <= last:
            for i in (3, 7):
                s['fill'].append((count[w + i][0], count[w + i][1], jaccard(bars[w + i], bars[w + i - 1])))
            for i in (1, 2, 5, 6):
                s['other'].append((count[w + i][0], count[w + i][1], jaccard(bars[w + i], bars[w + i - 1])))
            w += 8
    return s


def figures(s):
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    def phrase(bars):
        n = len(bars); h = sum(b[0] for b in bars)
        return h / n, sum(b[1] for b in bars) / h, mean([b[2] for b in bars])
    fh, fc, fs = phrase(s['fill']); oh, oc, os_ = phrase(s['other'])
    out = {f'bar_similarity_lag{k}': mean(v) for k, v in s['lag'].items()}
    out.update(patterns_per_16_bars=mean(s['patterns']), fill_hits_ratio=fh / oh, fill_tom_crash_ratio=fc / oc,
               fill_similarity_ratio=fs / os_, simultaneous_onset_share=s['multi'] / s['onsets'],
               velocity_mean=mean(s['vel']), soft_hit_share=sum(v < 50 for v in s['vel']) / len(s['vel']),
               hihat_velocity_spread=mean(s['hat_sd']), loudness_drift=mean(s['drift']))
    names = ["kick", "snare", "closed hi-hat", "open hi-hat", "low tom", "mid tom", "high tom", "crash", "ride"]
    out['grid16_share_by_class'] = {names[c]: (s['grid'][c] / s['cls'][c] if s['cls'][c] else None) for c in range(9)}
    out['velocity_mean_by_class'] = {names[c]: mean(s['cls_vel'][c]) for c in range(9)}
    out['hit_share_by_class'] = {names[c]: (s['cls'][c] / sum(s['cls']) if sum(s['cls']) else None) for c in range(9)}
    return out


def js_bits(a, b):
    """Jensen-Shannon divergence in bits between two count vectors."""
    p = [x / sum(a) for x in a]; q = [x / sum(b) for x in b]
    kl = lambda u, v: sum(x * math.log2(x / y) for x, y in zip(u, v) if x > 0)
    m = [(x + y) / 2 for x, y in zip(p, q)]
    return (kl(p, m) + kl(q, m)) / 2


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('out'); ap.add_argument('--generated', nargs='+', required=True); ap.add_argument('--reference', nargs='+', required=True)
    a = ap.parse_args()
    g, r = side(a.generated), side(a.reference)
    result = dict(generated=a.generated, reference=a.reference,
                  figures=dict(generated=figures(g), reference=figures(r)),
                  class_mix_js_bits=js_bits(g['cls'], r['cls']))
    json.dump(result, open(a.out, 'w'), indent=1)
    json.dump(result['figures'], sys.stdout, indent=1)
