/*
 * cxxreplace.cc - C++ allocations for t2310, run with a malloc
 * replacement (fakealloc.cc) preloaded after libmemprov.so. Live at exit:
 *   main:   100 B (new int[25], after a new[] that threw bad_alloc)
 *   worker: 333 B (new char[333], in another thread)
 *   main:    77 B (new (std::nothrow) char[77])
 *   main:   555 B (new char[555]: the replacement maps it, at the
 *            start of a mapping memprov records too)
 *   main:    32 B and 301 B (a std::string and its body, which
 *            libstdc++ allocates: its own call to operator new)
 * A std::vector is made and deleted; the huge new[] fails.
 */
#include <cstdio>
#include <new>
#include <string>
#include <thread>
#include <vector>

void *volatile keep[4];
std::string *volatile text;

static void worker()
{
	keep[1] = new char[333]; /* @worker */
}

int main(int argc, char **)
{
	try {
		keep[3] = new char[(std::size_t)1 << (59 + argc)];
	} catch (const std::bad_alloc &) {
		std::puts("bad_alloc caught");
	}
	keep[0] = new int[24 + argc]; /* @after-throw */
	std::thread t(worker);
	t.join();
	std::vector<int> *v = new std::vector<int>(10);
	delete v;
	keep[2] = new (std::nothrow) char[76 + argc]; /* @nothrow */
	/* its 301 B body is libstdc++'s own call to operator new */
	text = new std::string(299 + argc, 'q'); /* @text */
	keep[3] = new char[554 + argc]; /* @mapped */
	return 0;
}
