cd /tmp/scale67b/tree
P=.tox/functional/bin/python
for cfg in "64 2 w2_r0" "1 1 b1_r1" "64 2 w2_r1" "64 1 w1_r1"; do
  set -- $cfg
  date >> /tmp/scale67b/times.txt; echo "start $3" >> /tmp/scale67b/times.txt
  $P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers 1 --repeats 1 --batch $1 --writers $2 --lock /tmp/memmut-tcg.lock --out /tmp/scale67b/$3 > /tmp/scale67b/$3.log 2>&1
  echo "rc $?" >> /tmp/scale67b/times.txt
done
date >> /tmp/scale67b/times.txt; echo done >> /tmp/scale67b/times.txt
