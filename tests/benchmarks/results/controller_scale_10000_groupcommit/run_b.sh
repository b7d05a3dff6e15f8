cd /tmp/scale67/tree
P=.tox/functional/bin/python
for cfg in "64 b64t_r0" "64 b64t_r1" "1 b1t_r0"; do
  set -- $cfg
  date >> /tmp/scale67/times.txt; echo "start $2" >> /tmp/scale67/times.txt
  $P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers 1 --repeats 1 --batch $1 --threads 128 --pool 128 --lock /tmp/memmut-tcg.lock --out /tmp/scale67/$2 > /tmp/scale67/$2.log 2>&1
  echo "rc $?" >> /tmp/scale67/times.txt
done
date >> /tmp/scale67/times.txt; echo done2 >> /tmp/scale67/times.txt
