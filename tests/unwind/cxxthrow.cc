// cxxthrow.cc - C++ exceptions through allocating frames, for
// tests/t2020-unwind.sh: allocations in constructors, in destructors run
// while an exception unwinds, in catch blocks and by the exception
// machinery itself (__cxa_allocate_exception), 200 rounds.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

struct holder {
	std::string s;
	explicit holder(int i) : s(64 + i, 'x') {}
	~holder() { void *p = std::malloc(24); std::free(p); }
};

static __attribute__((noinline)) int level3(int i)
{
	holder h(i);
	if (i % 3 == 0)
		throw std::runtime_error(std::string(100, 'e'));
	return (int)h.s.size();
}

static __attribute__((noinline)) int level2(int i)
{
	std::vector<int> v(10 + i);
	return level3(i) + (int)v.size();
}

static __attribute__((noinline)) int level1(int i)
{
	try {
		return level2(i);
	} catch (const std::exception &e) {
		std::string msg(e.what());
		return (int)msg.size();
	}
}

int main()
{
	long sum = 0;
	for (int i = 0; i < 200; i++)
		sum += level1(i);
	std::printf("%ld\n", sum);
	return 0;
}
