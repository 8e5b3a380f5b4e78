#!/usr/bin/env python3
"""Self instructions per request of each function in two callgrind profiles, the largest differences first.

  Benchmarks/callgrind_diff.py BEFORE.out AFTER.out REQUESTS_BEFORE REQUESTS_AFTER [ROWS]

callgrind.sh writes Benchmarks/out/callgrind.out and prints the requests; copy each profile away before the next run.
Names are demangled (swift-demangle) and a private declaration's file discriminator is dropped, so a function that
moved between files or lost `private` is still one row. Written because callgrind_annotate 3.19 charges every
instruction of these profiles to start_thread.
"""
import sys,re,subprocess
def parse(path):
    names={}; self_cost={}; fn=None; skip=False
    for line in open(path,errors='replace'):
        line=line.rstrip('\n')
        m=re.match(r'(c?fn)=\((\d+)\)(?: (.*))?$',line)
        if m:
            if m.group(3): names[m.group(2)]=m.group(3)
            if m.group(1)=='fn': fn=m.group(2)
            continue
        if line.startswith('calls='): skip=True; continue
        if line and (line[0].isdigit() or line[0] in '+-*'):
            parts=line.split()
            if skip: skip=False; continue
            if len(parts)>=2 and fn:
                try: self_cost[fn]=self_cost.get(fn,0)+int(parts[1])
                except: pass
    raw={}
    for k,v in self_cost.items(): raw[names.get(k,k)]=raw.get(names.get(k,k),0)+v
    keys=list(raw)
    dm=subprocess.run(['/opt/swift/usr/bin/swift-demangle','--simplified'],input='\n'.join(keys),capture_output=True,text=True).stdout.split('\n')
    out={}
    for k,d in zip(keys,dm):
        d=re.sub(r'\(in _[0-9A-F]+\)','',d)
        out[d]=out.get(d,0)+raw[k]
    return out
a=parse(sys.argv[1]); b=parse(sys.argv[2]); na=float(sys.argv[3]); nb=float(sys.argv[4])
keys=list(set(a)|set(b))
rows=sorted(keys,key=lambda k:-abs(b.get(k,0)/nb-a.get(k,0)/na))[:int(sys.argv[5]) if len(sys.argv)>5 else 30]
for k in rows:
    print(f"{a.get(k,0)/na:8.1f} {b.get(k,0)/nb:8.1f} {b.get(k,0)/nb-a.get(k,0)/na:+8.1f}  {k[:150]}")
