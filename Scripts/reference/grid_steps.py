"""Independent reference for the grid layout's dataset view (`TrainingData.gridFiles`),
written from the definition in docs/research.md ("The grid layout"), not from the Swift code.
Reads MIDI with mido.

usage: grid_steps.py OUT.json FILE...
Each file: 480 PPQ, NOTE ONs with velocity > 0 on every channel, unquantized. A file whose
time signatures are all 4/4 (or that has none) becomes 16th-note grid hits: bars start at
tick 0 (every 1920 ticks); the grid starts at the bar line before the file's first hit; step q = floor((t - start + 60) / 120), offset = t - start - 120 q;
notes outside Magenta's 9 classes are left out; the first hit of a class in a step (earliest,
then lowest note) gives the step's velocity, offset and note, and any further hit of that class
in that step makes it a double. Other files are listed as skipped.
Regenerate Tests/Fixtures/grid/expected.json with:
  python3 Scripts/reference/grid_steps.py Tests/Fixtures/grid/expected.json Tests/Fixtures/grid/src/*/*/*.mid
"""
import json, os, sys
import mido

CLASSES = [[36, 35], [38, 27, 28, 31, 32, 33, 34, 37, 39, 40, 56, 65, 66, 75, 85],
           [42, 44, 54, 68, 69, 70, 71, 73, 78, 80, 22], [46, 67, 72, 74, 79, 81, 26],
           [45, 29, 41, 43, 61, 64, 84], [48, 47, 60, 63, 77, 86, 87], [50, 30, 62, 76, 83],
           [49, 52, 55, 57, 58], [51, 53, 59, 82]]
CLASS = {n: c for c, ns in enumerate(CLASSES) for n in ns}
BAR, STEP = 1920, 120


def grid(path):
    m = mido.MidiFile(path)
    assert m.ticks_per_beat == 480, path
    hits, meters = [], set()
    for track in m.tracks:
        t = 0
        for msg in track:
            t += msg.time
            if msg.type == 'time_signature':
                meters.add((msg.numerator, msg.denominator))
            if msg.type == 'note_on' and msg.velocity > 0:
                hits.append((t, msg.note, msg.velocity))
    if meters - {(4, 4)}:
        return None
    hits.sort(key=lambda h: (h[0], h[1]))
    start = hits[0][0] // BAR * BAR
    cells = {}
    for t, note, vel in hits:
        if note not in CLASS:
            continue
        c = CLASS[note]
        q = (t - start + STEP // 2) // STEP
        if (q, c) in cells:
            cells[(q, c)]['double'] = True
        else:
            cells[(q, c)] = dict(step=q, cls=c, velocity=vel, offset=t - start - q * STEP, note=note, double=False)
    return sorted(cells.values(), key=lambda h: (h['step'], h['cls']))


out = {}
for path in sys.argv[2:]:
    key = '/'.join(path.split('/')[-3:])
    g = grid(path)
    out[key] = None if g is None else [[h['step'], h['cls'], h['velocity'], h['offset'], h['note'], int(h['double'])] for h in g]
    print(key, 'skipped' if g is None else f'{len(g)} grid hits, {sum(h["double"] for h in g)} doubles')
json.dump(out, open(sys.argv[1], 'w'), indent=0)
