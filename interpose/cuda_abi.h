/*
 * cuda_abi.h - the few CUDA driver and runtime ABI facts hooks_cuda.c
 * needs, written out so that libmemprov.so builds without the CUDA
 * toolkit. Values match cuda.h / driver_types.h of CUDA 11-13 (x86-64).
 */
#ifndef MEMPROV_CUDA_ABI_H
#define MEMPROV_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;                   /* enum cudaError_enum */
typedef int cudaError_t;                /* enum cudaError */
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef void *cudaStream_t;
typedef void *cudaMemPool_t;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NOT_FOUND 500
#define cudaSuccess 0
#define cudaErrorInsufficientDriver 35

/* cuGetProcAddress flags (CUdriverProcAddress_flags). */
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1 << 1)

/* The start of CUmemAllocationProp: location.id is the device ordinal. */
struct cu_mem_alloc_prop_head {
	int type;
	int requested_handle_types;
	int location_type;
	int location_id;
};

/* Runtime structs passed by value to cudaMalloc3D. */
struct cuda_pitched_ptr {
	void *ptr;
	size_t pitch;
	size_t xsize;
	size_t ysize;
};

struct cuda_extent {
	size_t width;
	size_t height;
	size_t depth;
};

#endif /* MEMPROV_CUDA_ABI_H */
