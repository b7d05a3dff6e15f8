"""One configuration of a model screen against another, run for run:
the paired mean differences over all runs, then per case that moved the
means over the seeds of vm_over, % saved, S_more and S_less (one poll of
allowance, % of booked).

    python3 compare.py REF_DIR REF_LABEL NEW_DIR NEW_LABEL
"""
import collections, json, os, statistics, sys
def load(path, label):
    runs = [json.loads(l) for l in open(os.path.join(path, 'model.jsonl'))]
    none = {(r['pattern'], r.get('alloc','s'), r['seed'], r['start']): r['ops'] for r in runs if r['label'] == 'none'}
    none2 = {(r['pattern'], r['seed']): r['ops'] for r in runs if r['label'] == 'none'}
    out = {}
    for r in runs:
        if r['label'] != label: continue
        case = r['pattern'] + ('' if r.get('alloc', 's') == 's' else ',' + r['alloc'])
        n = none2[(r['pattern'], r['seed'])]
        out[(case, r['start'], r['seed'])] = (n / r['ops'], r['saved_pct'], r.get('S_more'), r.get('S_less'))
    return out
ref_dir, ref_label, new_dir, new_label = sys.argv[1:5]
a = load(ref_dir, ref_label); b = load(new_dir, new_label)
keys = sorted(set(a) & set(b))
print('%d paired, %d identical; vm_over %+.4f saved %+.2f' % (len(keys), sum(a[k]==b[k] for k in keys), statistics.mean(b[k][0]-a[k][0] for k in keys), statistics.mean(b[k][1]-a[k][1] for k in keys)))
per = collections.defaultdict(list)
for k in keys: per[k[:2]].append((a[k], b[k]))
def m(xs): 
    xs=[x for x in xs if x is not None]; return statistics.mean(xs) if xs else float('nan')
for (case, start), v in sorted(per.items()):
    if all(x == y for x, y in v): continue
    print('%-16s %-6s vm_over %.3f -> %.3f  saved %5.1f -> %5.1f  S_more %5.2f -> %5.2f  S_less %5.2f -> %5.2f' % (case, start, m(x[0] for x,_ in v), m(y[0] for _,y in v), m(x[1] for x,_ in v), m(y[1] for _,y in v), m(x[2] for x,_ in v), m(y[2] for _,y in v), m(x[3] for x,_ in v), m(y[3] for _,y in v)))
