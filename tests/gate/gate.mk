# tests/gate/gate.mk - test programs for the CI gate (tests/t7*.sh), built
# -g -O0 so that reports name exact lines. The CUDA ones use the fake
# runtime of tests/fakecuda/ (shared and static) and need its headers.
tests/bin/gate_leak: tests/gate/gate_leak.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -pthread -o $@ $<

TEST_BUILD += tests/bin/gate_leak

ifneq ($(wildcard /usr/local/cuda/include/cuda_runtime_api.h),)
tests/bin/gate_cuda_dyn: tests/gate/gate_cuda.c tests/bin/libcuda.so.1 tests/bin/libcudart.so
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 -Wall -Wextra -D_GNU_SOURCE \
		-I/usr/local/cuda/include -o $@ $< -Ltests/bin -lcudart

tests/bin/gate_cuda_static: tests/gate/gate_cuda.c tests/bin/libcudart_fake.a tests/bin/libcuda.so.1
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 -Wall -Wextra -D_GNU_SOURCE \
		-I/usr/local/cuda/include -o $@ $< tests/bin/libcudart_fake.a -ldl -lpthread

TEST_BUILD += tests/bin/gate_cuda_dyn tests/bin/gate_cuda_static
endif
