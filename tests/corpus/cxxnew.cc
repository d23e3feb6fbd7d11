/*
 * cxxnew.cc - C++ allocations through operator new, new[] and aligned
 * new, some deleted, built at -O0 and -O2 (where the make_* functions are
 * inlined). Reports name the API ("operator new[]") and the first frame
 * outside it (make_buffer), as valgrind does. Live at exit from here:
 *   make_buffer: 1 block of 1000 B (new[])
 *   make_int:    1 block of 4 B (new)
 *   make_wide:   1 block of 128 B (aligned new: sizeof(Wide) is 128)
 */
#include <cstddef>

struct alignas(64) Wide {
	char b[100];
};

static char *make_buffer(std::size_t n)
{
	return new char[n]; /* @make_buffer */
}

static int *make_int(int v)
{
	return new int(v); /* @make_int */
}

static Wide *make_wide()
{
	return new Wide(); /* @make_wide */
}

/* a global, not a static: -O2 would drop stores no one reads, and the news */
void *volatile sink[3];

int main(int argc, char **)
{
	sink[0] = make_buffer(1000 + argc - 1); /* @main-buffer */
	int *freed = make_int(argc);
	delete freed;
	sink[1] = make_int(argc + 1); /* @main-int */
	sink[2] = make_wide(); /* @main-wide */
	char *tmp = make_buffer(10);
	delete[] tmp;
	return 0;
}
