#!/usr/bin/env python3
"""Mutation check of the optimizer and schedule paths: applies each mutation below to the
sources, one at a time, builds, runs the TrainTests, says which test caught it, and restores
the file. Every mutation must be caught. Run from the repository root; about 3 minutes per
mutation on 2 cores. (A developer tool, not part of CI.)"""
import subprocess,sys
O='Sources/Train/Optimizer.swift'; S='Sources/Train/LearningRateSchedule.swift'
muts=[
 ("rmsprop: epsilon outside the square root", O, "params[k] -= lr * g / (s + e).squareRoot()", "params[k] -= lr * g / (s.squareRoot() + e)"),
 ("rmsprop: epsilon dropped", O, "params[k] -= lr * g / (s + e).squareRoot()", "params[k] -= lr * g / s.squareRoot()"),
 ("rmsprop: decay and 1 - decay swapped", O, "let s = d * ms[k] + d1 * (g * g)", "let s = d1 * ms[k] + d * (g * g)"),
 ("momentum: coefficient ignored (always 0.9)", O, "let vk = m * v[k] + g", "let vk = 0.9 * v[k] + g"),
 ("clipping: upper bound doubled", O, "let lr = config.learningRate, hi = config.clip, lo = -config.clip", "let lr = config.learningRate, hi = 2 * config.clip, lo = -config.clip"),
 ("clipping: off", O, "let lr = config.learningRate, hi = config.clip, lo = -config.clip", "let lr = config.learningRate, hi = Float.infinity, lo = -Float.infinity"),
 ("plateau: patience off by one", S, "guard let p = plateauPatience, progress.badEvaluations >= p else { return false }", "guard let p = plateauPatience, progress.badEvaluations > p else { return false }"),
 ("plateau: counter not reset after a decay", S, "        progress.plateauDecays += 1\n        progress.badEvaluations = 0", "        progress.plateauDecays += 1"),
 ("schedule: one decay too many", S, "return base * powf(factor, Float(decays))", "return base * powf(factor, Float(decays + 1))"),
]
for name,f,a,b in muts:
    src=open(f).read(); assert a in src,(name)
    open(f,'w').write(src.replace(a,b,1))
    try:
        bld=subprocess.run("swift build --build-tests 2>&1",shell=True,capture_output=True,text=True).stdout
        if "error:" in bld: print(f"{name}: BUILD ERROR"); continue
        out=subprocess.run("swift test --skip-build --disable-swift-testing --filter 'TrainTests' 2>&1",shell=True,capture_output=True,text=True).stdout
        fails=sorted(set(l.split(' : ')[0].split('error: ')[-1] for l in out.split('\n') if ': error: ' in l))
        print(f"{name}: {'CAUGHT by ' + ', '.join(fails[:4]) + (' …' if len(fails)>4 else '') if fails else 'SURVIVED'}", flush=True)
    finally:
        open(f,'w').write(src)
