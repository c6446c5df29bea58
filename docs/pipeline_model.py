#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pipeline_model.py: a model of one GPU's pipeline for a copy-bound shape
(tall: DGEMM 131072 x 4096 x 4096; tf32: TF32 SGEMM 65536 x 16384 x 16384;
both column-major), to predict what a change
of block heights would give before building it (docs/PERFORMANCE.md,
session 20).

Three FIFO queues, as the pipeline issues them: the copy-in engine (op(B),
then each block's A in k-pieces), the multiply (each block's first pieces
whole, its last piece in chunks of C's columns) and the copy-out engine
(each chunk of C after its multiply). A block's A waits for the multiplies
of the block `ring` blocks before it (its device slot). Copy rates are the
measured ones beside a multiply on an H200 (PERFORMANCE.md, "Copies beside
a multiply": GB/s by line length, one direction alone or both at once);
the multiply runs at R. Time advances event by event (fluid rates).

Usage: python3 docs/pipeline_model.py
"""
import re

RATE = {'tall': 62e12, 'tf32': 420e12}  # flop/s beside copies: DGEMM (64.8 measured on 8192^3 blocks,
                                        # 56 in-core on the whole shape), TF32 SGEMM (450 on blocks, 352 whole)
# line bytes -> (in alone, out alone, in beside out, out beside in), GB/s beside a multiply
RATES = {8192: (33.0, 33.1, 32.7, 32.7), 16384: (32.7, 32.8, 32.5, 32.5), 32768: (47.6, 43.6, 42.9, 42.9),
         65536: (55.3, 49.0, 47.3, 47.3), 131072: (55.3, 49.1, 47.3, 47.3), 'packed': (55.3, 55.3, 50.6, 50.6)}


def line_key(line):
    return min((k for k in RATES if k != 'packed'), key=lambda x: abs(x - line))


def simulate(blocks, n=4096, k=4096, e=8, pieces=2, chunks=8, ring=3, R=RATE['tall']):
    """Seconds for row blocks of these heights; and each queue's busy time."""
    ins = [{'bytes': k * n * e, 'key': 'packed', 'deps': [], 'name': 'B'}]
    mults, outs = [], []
    for bi, mb in enumerate(blocks):
        key = line_key(mb * e)
        pin = [{'bytes': mb * (k // pieces) * e, 'key': key, 'deps': [], 'name': 'A%d.%d' % (bi, p), 'blk': bi}
               for p in range(pieces)]
        ins += pin
        prev = None
        for p in range(pieces - 1):
            prev = {'flop': 2 * mb * n * (k // pieces), 'deps': [ins[0], pin[p]] + ([prev] if prev else []),
                    'name': 'M%d.p%d' % (bi, p)}
            mults.append(prev)
        for c in range(chunks):
            mc = {'flop': 2 * mb * (n // chunks) * (k // pieces), 'deps': [ins[0], pin[-1]] + ([prev] if prev else []),
                  'name': 'M%d.c%d' % (bi, c)}
            mults.append(mc)
            outs.append({'bytes': mb * (n // chunks) * e, 'key': key, 'deps': [mc], 'name': 'O%d.%d' % (bi, c)})
    last = {}
    for m in mults:
        last[int(re.match(r'M(\d+)', m['name']).group(1))] = m
    for it in ins[1:]:
        if it['blk'] >= ring:
            it['deps'].append(last[it['blk'] - ring])
    queues, idx, rem, done = [ins, mults, outs], [0, 0, 0], [None] * 3, set()
    t, busy = 0.0, [0.0] * 3
    while any(idx[q] < len(queues[q]) for q in range(3)):
        act = [None] * 3
        for q in range(3):
            if idx[q] < len(queues[q]):
                it = queues[q][idx[q]]
                if all(id(d) in done for d in it['deps']):
                    act[q] = it
                    if rem[q] is None:
                        rem[q] = it.get('bytes', it.get('flop'))
        both = act[0] is not None and act[2] is not None
        r = [0.0] * 3
        if act[0]:
            r[0] = RATES[act[0]['key']][2 if both else 0] * 1e9
        if act[1]:
            r[1] = R
        if act[2]:
            r[2] = RATES[act[2]['key']][3 if both else 1] * 1e9
        dt = min(rem[q] / r[q] for q in range(3) if act[q])
        t += dt
        for q in range(3):
            if act[q]:
                busy[q] += dt
                rem[q] -= r[q] * dt
                if rem[q] <= 1e-6 * r[q]:
                    done.add(id(act[q]))
                    idx[q] += 1
                    rem[q] = None
    return t, busy


def main():
    for shape, m, n, e, floor in (('tall', 131072, 4096, 8, 0.0859), ('tf32', 65536, 16384, 4, 0.0999)):
        cases = [('%d rows' % h, [h] * (m // h)) for h in (4096, 8192, 16384)]
        cases += [('head %s, then 8192' % ', '.join(map(str, head)), head + [8192] * ((m - sum(head)) // 8192))
                  for head in ([4096, 4096], [2048, 2048, 4096], [1024, 1024, 2048, 4096])]
        cases += [('head and tail 4096', [4096] + [8192] * (m // 8192 - 1) + [4096]),
                  ('head 2048, 2048, 4096; tail 4096, 2048, 2048',
                   [2048, 2048, 4096] + [8192] * (m // 8192 - 2) + [4096, 2048, 2048])]
        # session 25: a short head for an early copy-out, then long lines
        def body(head, tail):  # 16384-row blocks between, the rest in one block before the tail
            rest = m - sum(head) - sum(tail)
            return head + [16384] * (rest // 16384) + ([rest % 16384] if rest % 16384 else []) + tail
        cases += [('head %s, then 16384%s' % (', '.join(map(str, head)), ', tail 8192' if tail else ''),
                   body(head, tail)) for head, tail in (([8192], []), ([4096, 4096, 8192], [8192]))]
        print('\n%s (floor %.4f s, the suite\'s)\n' % (shape, floor))
        print('| blocks | model (ms) | floor/time | in busy | multiply busy | out busy |')
        print('| --- | --- | --- | --- | --- | --- |')
        for name, blocks in cases:
            assert sum(blocks) == m, name
            t, b = simulate(blocks, n=n, k=n, e=e, R=RATE[shape])
            print('| %s | %.1f | %.3f | %.1f | %.1f | %.1f |' % (name, t * 1e3, floor / t, b[0] * 1e3, b[1] * 1e3,
                                                               b[2] * 1e3))


if __name__ == '__main__':
    main()
