"""eh_resident.py - resident pages of the .eh_frame of this Python
executable and of libc, read from /proc/self/pagemap after a workload
that allocates from many distinct native stacks. Prints
"exe PAGES libc PAGES".

    python3 eh_resident.py [dup2 | rawdup2]

rawdup2: first puts /dev/null over every descriptor open on the executable
or libc (memprov's, which it reads .eh_frame through) with libc's dup2
found by dlsym on libc's handle (ctypes.CDLL("libc.so.6").dup2: memprov
hooks neither that nor a system call instruction, and cannot move its
descriptor out of the way first: the file is taken over); dup2: the
same through os.dup2 (the dup2 the program links to, memprov's hook,
which moves its descriptor); then loads and unloads a
library (dlclose empties memprov's cache of unwind rules: every rule is
looked up again), imports a few modules and calls into libc (new
stacks through libc)."""
import os, struct, sys, json, re

def eh_frame(path):
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        s = sh(i)
        name = data[stroff + s[0]:data.index(b"\0", stroff + s[0])]
        if name == b".eh_frame":
            return s[4], s[5]  # file offset, size
    raise SystemExit("no .eh_frame in " + path)

def resident(path):
    off, size = eh_frame(path)
    pm = open("/proc/self/pagemap", "rb")
    n = 0
    for line in open("/proc/self/maps"):
        p = line.split()
        if len(p) < 6 or os.path.realpath(p[5]) != path:
            continue
        lo, hi = (int(x, 16) for x in p[0].split("-"))
        moff = int(p[2], 16)
        # the part of .eh_frame this mapping holds, page by page
        a = max(off, moff)
        b = min(off + size, moff + hi - lo)
        page = a // 4096 * 4096
        while page < b:
            va = lo + page - moff
            pm.seek(va // 4096 * 8)
            if struct.unpack("<Q", pm.read(8))[0] >> 63:
                n += 1
            page += 4096
    return n

def work(depth, k):
    if depth:
        return work(depth - 1, k)
    text = json.dumps({"k%d" % i: [i] * (k % 7) for i in range(50)})
    return len(re.findall(r"k\d+", text)) + len(json.loads(text))

if sys.argv[1:] in (["dup2"], ["rawdup2"]):
    import ctypes
    raw = sys.argv[1] == "rawdup2"
    libc_dup2 = ctypes.CDLL("libc.so.6").dup2
    mine = {os.path.realpath(sys.executable)}
    mine |= {os.path.realpath(l.split()[5]) for l in open("/proc/self/maps") if "libc.so" in l}
    null = os.open("/dev/null", os.O_RDONLY)
    # by number: a listing of /proc/self/fd leaves memprov's out
    for fd in range(3, os.sysconf("SC_OPEN_MAX")):
        try:
            if os.path.lexists("/proc/self/fd/%d" % fd) and \
                    os.path.realpath("/proc/self/fd/%d" % fd) in mine:
                if raw:
                    libc_dup2(null, fd)
                else:
                    os.dup2(null, fd)
        except OSError:
            pass
    import ctypes, _ctypes
    _ctypes.dlclose(ctypes.CDLL("libz.so.1")._handle)
    import decimal, email.parser, xml.dom.minidom, unittest, argparse  # new stacks
    import grp, pwd, socket, time  # allocations from deep inside libc
    pwd.getpwall(), grp.getgrall(), os.listdir("/usr/lib"), time.strftime("%c")
    try:
        socket.getaddrinfo("localhost", 80)
    except OSError:
        pass
total = sum(work(d, k) for d in range(30) for k in range(20))
libc = [l.split()[5] for l in open("/proc/self/maps") if "libc.so" in l][0]
print("exe %d libc %d" % (resident(os.path.realpath(sys.executable)), resident(os.path.realpath(libc))))
