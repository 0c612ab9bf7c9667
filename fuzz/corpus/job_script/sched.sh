#!/bin/sh
#SCHED --kind malleable --min-nodes 2 --max-nodes 8 --constraint pof2
#SCHED -t 30:00 --output=out-%j.txt
#SCHED --nodes 'four'
exec ./app
