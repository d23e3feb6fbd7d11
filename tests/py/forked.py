# The parent forks; the child keeps a buffer made in child_work() and
# leaves by os._exit(0). Prints the child's pid and exit status.
import os


def child_work():
    return bytearray(1_500_000)  # CHILD-ALLOC


pid = os.fork()
if pid == 0:
    kept = child_work()  # CHILD-CALL
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(pid, os.waitstatus_to_exitcode(status))
