# stop 67, after the last-interval lag: the defaults twice and batch 1
# once more, alternated, from a copy of the tree at its COMMIT
D=/tmp/scale67c
cd $D/tree
P=.tox/functional/bin/python
for cfg in "64 2 w2_r2" "1 1 b1_r2" "64 2 w2_r3"; do
  set -- $cfg
  date >> $D/times.txt; echo "start $3" >> $D/times.txt
  $P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers 1 --repeats 1 --batch $1 --writers $2 --lock /tmp/memmut-tcg.lock --out $D/$3 > $D/$3.log 2>&1
  echo "rc $?" >> $D/times.txt
done
date >> $D/times.txt; echo done >> $D/times.txt
