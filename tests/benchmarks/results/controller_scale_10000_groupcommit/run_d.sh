cd /tmp/scale67b/tree
P=.tox/functional/bin/python
while pgrep -f "bash /tmp/scale67b/run.sh" > /dev/null; do sleep 5; done
for cfg in "64 4 1 w4_r0" "64 2 2 c2w2_r0"; do
  set -- $cfg
  date >> /tmp/scale67b/times.txt; echo "start $4" >> /tmp/scale67b/times.txt
  $P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers $3 --repeats 1 --batch $1 --writers $2 --lock /tmp/memmut-tcg.lock --out /tmp/scale67b/$4 > /tmp/scale67b/$4.log 2>&1
  echo "rc $?" >> /tmp/scale67b/times.txt
done
date >> /tmp/scale67b/times.txt; echo done3 >> /tmp/scale67b/times.txt
