# fakecuda.mk - fake CUDA driver and runtime, the CUDA test programs, and
# libmemprov_cudastub.so (the CUDA hooks over a text-printing recorder).
# Included by the top Makefile; everything lands in tests/bin/.
#
#   tests/bin/libcuda.so.1          fake driver (tests/fakecuda/fake_cuda.c)
#   tests/bin/libcudart.so          fake runtime, shared
#   tests/bin/libcudart_fake.a      the same runtime, to link statically
#   tests/bin/libmemprov_cudastub.so  hooks_cuda.c + hooks_dlsym.c + their lower
#                                     layers (elfsym.c, config.c, sys.c) + recstub.c
#   tests/bin/cuda-rt-dyn, cuda-rt-static, cuda-drv   scenario programs
#   tests/bin/cuda-nvcc-static, cuda-nvcc-shared      built by the real nvcc
#
# The fakes use the real headers for types and error codes; without the
# toolkit nothing here is built and the t3* tests skip.

FAKECUDA_INC ?= /usr/local/cuda/include
NVCC ?= /usr/local/cuda/bin/nvcc
FAKECUDA_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -fno-omit-frame-pointer \
	-Wno-deprecated-declarations -I$(FAKECUDA_INC)

ifneq ($(wildcard $(FAKECUDA_INC)/cuda.h),)

tests/bin/libcuda.so.1: tests/fakecuda/fake_cuda.c tests/fakecuda/fakecuda.mk
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -Wl,-Bsymbolic -Wl,-soname,libcuda.so.1 \
		-o $@ $< -ldl -lpthread

tests/bin/fake_cudart.o: tests/fakecuda/fake_cudart.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -fPIC -c -o $@ $<

tests/bin/libcudart.so: tests/bin/fake_cudart.o
	$(call quiet,LINK,$@)$(CC) -shared -Wl,-soname,libcudart.so -o $@ $< -ldl -lpthread

tests/bin/libcudart_fake.a: tests/bin/fake_cudart.o
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $<

CUDASTUB_SRC := interpose/hooks_cuda.c interpose/hooks_dlsym.c interpose/elfsym.c \
	interpose/config.c interpose/sys.c tests/fakecuda/recstub.c

tests/bin/libmemprov_cudastub.so: $(CUDASTUB_SRC) interpose/elfsym.h interpose/sys.h \
		tests/fakecuda/recstub.c interpose/cuda_abi.h interpose/cuda_hooks.h \
		interpose/recorder.h interpose/hooks_libc.h include/memprov_trace.h
	@mkdir -p tests/bin
	$(call quiet,LINK,$@)$(CC) $(CFLAGS) $(LIB_CFLAGS) -MF /dev/null -shared -o $@ \
		$(CUDASTUB_SRC) -ldl

CUDA_TEST_DEPS := tests/bin/libcuda.so.1 tests/bin/libcudart.so

tests/bin/cuda-rt-dyn: tests/cuda/rt_scenario.c $(CUDA_TEST_DEPS)
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -O0 -o $@ $< -Ltests/bin -lcudart -lpthread

tests/bin/cuda-rt-static: tests/cuda/rt_scenario.c tests/bin/libcudart_fake.a
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -O0 -o $@ $< tests/bin/libcudart_fake.a \
		-ldl -lpthread

tests/bin/cuda-drv: tests/cuda/drv_scenario.c tests/bin/libcuda.so.1
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -O0 -o $@ $< -Ltests/bin -l:libcuda.so.1 \
		-lpthread

tests/bin/cuda-reach: tests/cuda/reach_scenario.c $(CUDA_TEST_DEPS)
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -O0 -o $@ $< -Ltests/bin -lcudart

tests/bin/libcudaplug.so: tests/cuda/plugin.c $(CUDA_TEST_DEPS)
	$(call quiet,LINK,$@)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -o $@ $< -Ltests/bin -lcudart \
		-Wl,-rpath,'$$ORIGIN'

tests/bin/libcudart_b.so: tests/bin/fake_cudart.o
	$(call quiet,LINK,$@)$(CC) -shared -Wl,-soname,libcudart_b.so -o $@ $< -ldl -lpthread

tests/bin/libcudaplug_b.so: tests/cuda/plugin.c tests/bin/libcudart_b.so
	$(call quiet,LINK,$@)$(CC) $(FAKECUDA_CFLAGS) -fPIC -shared -o $@ $< -Ltests/bin -l:libcudart_b.so \
		-Wl,-rpath,'$$ORIGIN'

tests/bin/cuda-plugin: tests/cuda/plugin_scenario.c tests/bin/libcudaplug.so tests/bin/libcudaplug_b.so
	$(call quiet,CC,$@)$(CC) $(FAKECUDA_CFLAGS) -O0 -o $@ $< -ldl -Wl,-rpath,'$$ORIGIN'

TEST_BUILD += tests/bin/libcuda.so.1 tests/bin/libcudart.so tests/bin/libcudart_fake.a \
	tests/bin/libmemprov_cudastub.so tests/bin/cuda-rt-dyn tests/bin/cuda-rt-static \
	tests/bin/cuda-drv tests/bin/cuda-reach tests/bin/libcudaplug.so tests/bin/libcudart_b.so tests/bin/libcudaplug_b.so \
	tests/bin/cuda-plugin

ifneq ($(wildcard $(NVCC)),)
tests/bin/cuda-nvcc-static: tests/cuda/nvcc_prog.cu
	@mkdir -p tests/bin
	$(call quiet,NVCC,$@)$(NVCC) -g -o $@ $< 2>/dev/null || $(NVCC) -g -o $@ $<

tests/bin/cuda-nvcc-shared: tests/cuda/nvcc_prog.cu
	@mkdir -p tests/bin
	$(call quiet,NVCC,$@)$(NVCC) -g -cudart shared -o $@ $<

TEST_BUILD += tests/bin/cuda-nvcc-static tests/bin/cuda-nvcc-shared
endif

endif
