/* SPDX-License-Identifier: MIT */
/*
 * peers_module.c: the one exported symbol of oocgemm_peers.so, the module
 * that holds bench's CUDA peers (peers_cuda.c) so that oocgemm itself links
 * no CUDA library; peers_load.c finds it and calls through this table.
 */
#include "config.h"

#include "peers.h"

__attribute__((visibility("default"))) extern const peer_module_t oocgemm_peers_v1;

const peer_module_t oocgemm_peers_v1 = {
    .abi = PEER_MODULE_ABI,
    .gemm_size = sizeof(peer_gemm_t),
    .open = peer_open,
    .close = peer_close,
    .serial = peer_serial,
    .cublasxt = peer_cublasxt,
    .cublasxt_default_dim = peer_cublasxt_default_dim,
    .incore = peer_incore,
    .bandwidth = peer_bandwidth,
};
