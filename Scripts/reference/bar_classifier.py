"""A bar-level listening-test proxy: how often a classifier tells a generated 4/4 bar
from a human one. Not the team's own classifier (that one is kept outside the project) and not
part of `drummer`; a developer's check, to see whether a change makes bars harder to tell apart.

usage: bar_classifier.py --reference DIR GENERATED_DIR... [--control] [--null K]
  GENERATED_DIR: a folder of `drummer sample` files (e.g. `-n 1000 --count 100 --seed 1`).
Each bar is 9 drum classes (Magenta's) x 16 sixteenths of: hit, loudest velocity / 127, offset
from the sixteenth (as a share of it), both sides snapped to 30 ticks at 480 PPQ first (as
`drummer stats --quantize 30`). At most 60 bars per generated file; as many reference bars as
generated ones, drawn at random (seed 0). Gradient boosting (scikit-learn), 5-fold
cross-validation with a file's bars in one fold. Prints the accuracy with every feature, hits
only, hits and offsets, velocities only (0.5 = cannot tell). --control also classifies two
halves of the reference (about 0.5). The accuracy grows with the bars compared (the classifier
learns a small difference better from more bars), so compare folders of one size, and read a
score against --null K: K random sets of reference files with as many bars as the folder, each
scored against the rest of the reference exactly as the folder is (what two sets of human
files score at that size: the mean and the largest of K; all features and hits only). The
touch figures behind the velocity score (hi-hat velocity s.d. in a bar, loudness drift) are
`drummer stats`'s. Needs mido and scikit-learn
(pip install mido scikit-learn).
"""
import argparse, glob, os, random
import numpy as np
import mido
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold
from bar_structure import CLASS as CLASS_OF  # Magenta's 9 drum classes, as the stats reference reads them


def hits(path):
    """(tick at 480 PPQ snapped to 30, class, velocity) of every classed note-on; None unless 4/4."""
    mf = mido.MidiFile(path)
    ppq, out = mf.ticks_per_beat, []
    for track in mf.tracks:
        t = 0
        for m in track:
            t += m.time
            if m.type == 'time_signature' and (m.numerator, m.denominator) != (4, 4):
                return None
            if m.type == 'note_on' and m.velocity > 0 and m.note in CLASS_OF:
                out.append((int(round(t * 480 / ppq / 30)) * 30, CLASS_OF[m.note], m.velocity))
    return sorted(out)


def bars(path, cap=None):
    """Feature vectors (3 x 9 x 16) of the file's non-empty bars."""
    h = hits(path)
    if not h:
        return []
    n = h[-1][0] // 1920 + 1
    x = np.zeros((n, 3, 9, 16), np.float32)
    hit = [False] * n
    for t, c, v in h:
        s = int(round(t / 120))
        b, p = divmod(s, 16)
        if b >= n:
            continue
        x[b, 0, c, p] = 1
        x[b, 1, c, p] = max(x[b, 1, c, p], v / 127)
        x[b, 2, c, p] = (t - 120 * s) / 120
        hit[b] = True
    return [x[b].reshape(-1) for b in range(n) if hit[b]][:cap]


def load(files, cap=None):
    xs, groups = [], []
    for f in files:
        x = bars(f, cap)
        xs += x
        groups += [f] * len(x)
    return xs, groups


def accuracy(x, y, groups):
    acc = []
    for train, test in GroupKFold(5).split(x, y, groups):
        clf = HistGradientBoostingClassifier(max_iter=200, random_state=0).fit(x[train], y[train])
        acc.append((clf.predict(x[test]) == y[test]).mean())
    return float(np.mean(acc))


GENERATED_CAP = 60  # bars read from each generated file
FEATURES = {  # the columns each accuracy reads, of a bar's (hit, velocity, offset) planes
    'all': [0, 1, 2], 'hits': [0], 'hits+offset': [0, 2], 'velocity': [1]}


def told_apart(xr, gr, xg, gg, features=tuple(FEATURES)):
    """Accuracies with `features`, as many reference bars as generated ones (drawn at random,
    seed 0) against the generated bars; and that count."""
    n = min(len(xr), len(xg))
    rng = random.Random(0)
    ir, ig = rng.sample(range(len(xr)), n), rng.sample(range(len(xg)), n)
    x = np.array([xr[i] for i in ir] + [xg[i] for i in ig]).reshape(2 * n, 3, -1)
    y = np.array([0] * n + [1] * n)
    groups = [gr[i] for i in ir] + [gg[i] for i in ig]
    return [accuracy(x[:, FEATURES[f]].reshape(2 * n, -1), y, groups) for f in features], n


def null(xr, gr, bars, draws):
    """Accuracies (all, hits) of `draws` random sets of reference files (at least `bars` bars,
    a file's first GENERATED_CAP bars as of a generated file) against the rest of the reference."""
    files, per_file = sorted(set(gr)), {}
    for g in gr:
        per_file[g] = per_file.get(g, 0) + 1
    scores = []
    for k in range(draws):
        random.Random(1000 + k).shuffle(files)
        chosen, count = set(), 0
        for f in files:
            if count >= bars:
                break
            chosen.add(f)
            count += min(GENERATED_CAP, per_file[f])
        rest = [(x, g) for x, g in zip(xr, gr) if g not in chosen]
        side, taken = [], {}
        for x, g in zip(xr, gr):
            if g in chosen and taken.get(g, 0) < GENERATED_CAP:
                side.append((x, g))
                taken[g] = taken.get(g, 0) + 1
        scores.append(told_apart([x for x, _ in rest], [g for _, g in rest],
                                 [x for x, _ in side], [g for _, g in side], ('all', 'hits'))[0])
    return np.array(scores)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reference', required=True)
    ap.add_argument('--control', action='store_true')
    ap.add_argument('--null', type=int, default=0, metavar='K')
    ap.add_argument('generated', nargs='+')
    a = ap.parse_args()
    ref_files = sorted(glob.glob(os.path.join(a.reference, '**', '*.mid'), recursive=True))
    xr, gr = load(ref_files)
    print('reference %s: %d bars' % (a.reference, len(xr)))
    if a.control:
        files = sorted(set(gr))
        random.Random(1).shuffle(files)
        half = set(files[:len(files) // 2])
        y = np.array([1 if g in half else 0 for g in gr])
        print('control, reference half against half: %.3f' % accuracy(np.array(xr), y, gr))
    for d in a.generated:
        xg, gg = load(sorted(glob.glob(os.path.join(d, '*.mid'))), cap=GENERATED_CAP)
        acc, n = told_apart(xr, gr, xg, gg)
        print('%s: %d bars each; accuracy all %.3f, hits %.3f, hits+offset %.3f, velocity %.3f'
              % (d, n, *acc))
        if a.null:
            s = null(xr, gr, len(xg), a.null)
            print('  null, %d sets of reference files with as many bars against the rest: all %.3f (largest %.3f), '
                  'hits %.3f (largest %.3f)' % (a.null, s[:, 0].mean(), s[:, 0].max(), s[:, 1].mean(), s[:, 1].max()))


if __name__ == '__main__':
    main()
