#!/bin/sh
# t4016: OpenSSL's and glibc's resolver's process-wide state is not the
# program's. A Python program is judged on what is live at the end of its
# main module, before OPENSSL_cleanup frees that state at exit:
# ssl.create_default_context() failed the gate with 50 KiB in 525 blocks
# (the decoder and store caches, the table of names, error strings, the
# random generators, one-time initialisations, global tables made on
# first use), ssl.RAND_bytes with 5.3 KiB, socket.getfqdn with glibc's
# resolver configuration (120 B). Default suppressions now name them, and
# OpenSSL's CRYPTO_malloc family are allocation functions (reports name
# the API, CRYPTO_zalloc, and the caller). Contexts the program keeps
# still fail, and a native program's leaked SSL_CTX and EVP_MD_CTX are
# still definitely lost at their lines.
. "$(dirname "$0")/test-lib.sh"

cat >"$TRASH/clean.py" <<\EOF2
import socket, ssl
def main():
    ctx = ssl.create_default_context()
    print(ctx.verify_mode, len(ssl.RAND_bytes(16)), bool(socket.getfqdn("127.0.0.1")))
main()
EOF2

cat >"$TRASH/keep.py" <<\EOF2
import ssl
KEEP = []
def main():
    for i in range(3):
        KEEP.append(ssl.create_default_context())
main()
EOF2

test_expect_success 'an SSL context, random bytes and a host name made and dropped: the gate passes' '
	rm -rf c &&
	"$MEMPROV_CLI" run -d c -- /usr/bin/python3 clean.py >c.out 2>c.err &&
	/usr/bin/python3 clean.py >bare.out &&
	test_cmp bare.out c.out &&
	"$MEMPROV_CLI" check c >c.check &&
	grep "live at the end of the main module: 0 B in 0 blocks" c.check &&
	grep "^    [0-9.]* [KM]*i*B .* leak:^ERR_load_strings_const\$ (default: " c.check &&
	"$MEMPROV_CLI" check --json c >c.json &&
	/usr/bin/python3 - <<-\PY
	import json
	rules = {r["pattern"]: r["blocks"] for r in json.load(open("c.json"))["traces"][0]["suppressed"]["rules"]}
	print(rules)
	# the rest (names, random generators, run-once) are a block or a few
	# per line under ssl.py, asked by libcrypto: library state
	for p in ("^OSSL_DECODER_do_all_provided$", "^ERR_load_strings_const$", "^EVP_*_fetch$"):
	    assert rules.get(p, 0) > 0, p
	PY
'

test_expect_success 'three SSL contexts kept in a global still fail, at the line that made them' '
	rm -rf k &&
	"$MEMPROV_CLI" run -d k -- /usr/bin/python3 keep.py >/dev/null 2>&1 &&
	! "$MEMPROV_CLI" check k >k.check &&
	grep "live at the end of the main module: [0-9.]* MiB" k.check &&
	grep "#1 heap .* live at the end of the main module in main at .*keep.py:5$" k.check &&
	grep "^      SSLContext.load_default_certs .*ssl.py:[0-9]*$" k.check
'

if [ -e /usr/include/openssl/ssl.h ]; then
	cat >"$TRASH/leak.c" <<\EOF2
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <stdio.h>
int main(void)
{
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	SSL_CTX *c = SSL_CTX_new(TLS_method());
	printf("%d\n", m && c);
	m = NULL;
	c = NULL;
	return 0;
}
EOF2
	# what the scan finds lost under OpenSSL's state functions is a leak:
	# the program's own run-once function, a fetched algorithm never
	# freed, a hash table of its own (the rules hid them: the second
	# review; valgrind calls each definitely lost)
	cat >"$TRASH/own.c" <<\EOF2
#include <openssl/evp.h>
#include <openssl/lhash.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *keep;
static CRYPTO_ONCE once = CRYPTO_ONCE_STATIC_INIT;
static void my_init(void)
{
	keep = malloc(5000);
	keep = NULL;
}
int main(int argc, char **argv)
{
	if (!strcmp(argv[1], "once"))
		CRYPTO_THREAD_run_once(&once, my_init);
	else if (!strcmp(argv[1], "fetch"))
		keep = EVP_MD_fetch(NULL, "SHA256", NULL);
	else
		keep = OPENSSL_LH_new(NULL, NULL);
	keep = NULL;
	puts("done");
	return 0;
}
EOF2
	test_expect_success 'a native program: its own run-once function'"'"'s leak, a fetched algorithm and a table never freed fail' '
		cc -g -O0 -o own own.c -lcrypto &&
		for w in once fetch lh; do
			rm -rf o.$w &&
			"$MEMPROV_CLI" run -d o.$w -- ./own $w >/dev/null 2>&1 &&
			! "$MEMPROV_CLI" check o.$w >o.$w.check || exit 1
		done &&
		grep "#1 heap malloc: 4.9 KiB in 1 block definitely lost at exit in my_init at .*own.c:10$" o.once.check &&
		grep "lost at exit (definitely and indirectly): [1-9][0-9]* B in [1-9][0-9]* blocks" o.fetch.check &&
		grep "#1 heap CRYPTO_zalloc: 200 B in 2 blocks lost at exit (1 definitely, 1 indirectly) in main at .*own.c:20$" o.lh.check
	'

	test_expect_success 'a native program: a leaked EVP_MD_CTX and SSL_CTX are definitely lost at their lines' '
		cc -g -O0 -o leak leak.c -lssl -lcrypto &&
		rm -rf l &&
		"$MEMPROV_CLI" run -d l -- ./leak >/dev/null 2>&1 &&
		"$MEMPROV_CLI" leaks l/*.trace >l.leaks &&
		sed -n "/^definitely lost: 2 sites:/,/^[a-z]/p" l.leaks >def.txt &&
		cat def.txt &&
		grep -A1 "heap CRYPTO_zalloc: 1 block, 72 B" def.txt | grep "main .*leak.c:6$" &&
		grep -A2 "heap CRYPTO_zalloc: 1 block, 1.6 KiB" def.txt | grep "main .*leak.c:7$"
	'
else
	echo "skip - $TEST_NAME: no OpenSSL headers (libssl-dev): the native case"
fi

test_done
