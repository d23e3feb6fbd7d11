#!/bin/sh
# A launcher script of the kind people start Python through: it sets up
# the environment, then execs the interpreter given in $PY.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
exec "$PY" "$@"
