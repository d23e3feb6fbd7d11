#!/bin/sh
# shell_loop.sh N - a shell loop of N short commands (`make bench`'s
# "shell" workload): each iteration runs one of a few small programs that
# allocate little, as a build or a shell script does. Under memprov every
# process writes a trace of its own.
n=${1:-200}
i=0
while [ $i -lt "$n" ]; do
	case $((i % 4)) in
	0) ls -d / >/dev/null ;;
	1) cat /dev/null ;;
	2) date +%s >/dev/null ;;
	3) expr $i + 1 >/dev/null ;;
	esac
	i=$((i + 1))
done
echo "shell_loop: $n commands"
