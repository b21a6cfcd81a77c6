/* NVTX injection library for tests: records every push and pop of every domain.
 *
 * The NVTX runtime (header-only, compiled into the `nvtx` Python package) loads the library
 * named by NVTX_INJECTION64_PATH on the first NVTX call and calls InitializeInjectionNvtx2,
 * which fills the CORE and CORE2 callback tables with the functions below. Each event becomes
 * one line, written with a single write() so that threads and ranks do not interleave:
 *
 *   <RANK>\t<pid>\t<tid>\tpush\t<domain>\t<message>\n
 *   <RANK>\t<pid>\t<tid>\tpop\t<domain>\n
 *
 * The output file is named by NVTX_RECORD_PATH. Built by the tests with gcc against the NVTX
 * v3 headers of the nvidia-nvtx-cu12 wheel.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvtx3/nvToolsExt.h"

typedef struct {
    char name[256];
} Domain;

static int out_fd = -1;
static char rank[32] = "?";

static void emit(const char* kind, const char* domain, const char* msg) {
    char line[2048];
    int n;
    if (out_fd < 0) return;
    if (msg)
        n = snprintf(line, sizeof line, "%s\t%d\t%ld\t%s\t%s\t%s\n", rank, (int)getpid(),
                     (long)syscall(SYS_gettid), kind, domain, msg);
    else
        n = snprintf(line, sizeof line, "%s\t%d\t%ld\t%s\t%s\n", rank, (int)getpid(),
                     (long)syscall(SYS_gettid), kind, domain);
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
    if (write(out_fd, line, (size_t)n) < 0) { /* nothing sensible to do in a callback */ }
}

static const char* domain_name(nvtxDomainHandle_t d) {
    return d ? ((Domain*)d)->name : "";
}

static const char* message_of(const nvtxEventAttributes_t* a) {
    if (!a) return "";
    switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
        case NVTX_MESSAGE_TYPE_REGISTERED: return a->message.registered ? (const char*)a->message.registered : "";
        default: return "";
    }
}

static nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
    Domain* d = calloc(1, sizeof(Domain));
    if (!d) return NULL;
    snprintf(d->name, sizeof d->name, "%s", name ? name : "");
    return (nvtxDomainHandle_t)d;
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d) { (void)d; /* handles stay valid */ }

/* A registered string handle is the string itself, copied for the life of the process. */
static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d, const char* s) {
    (void)d;
    return (nvtxStringHandle_t)strdup(s ? s : "");
}

static int NVTX_API domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    emit("push", domain_name(d), message_of(a));
    return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d) {
    emit("pop", domain_name(d), NULL);
    return 0;
}

static int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
    emit("push", "", message_of(a));
    return 0;
}

static int NVTX_API push_a(const char* m) {
    emit("push", "", m ? m : "");
    return 0;
}

static int NVTX_API pop_(void) {
    emit("pop", "", NULL);
    return 0;
}

static void set(NvtxFunctionTable table, unsigned int size, unsigned int id, NvtxFunctionPointer fn) {
    if (table && id < size && table[id]) *table[id] = fn;
}

NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
    const NvtxExportTableCallbacks* cb;
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    const char* path = getenv("NVTX_RECORD_PATH");
    const char* r = getenv("RANK");
    if (r) snprintf(rank, sizeof rank, "%s", r);
    if (path) out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

    cb = (const NvtxExportTableCallbacks*)get_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;

    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size)) return 0;
    set(table, size, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
    set(table, size, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
    set(table, size, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop_);

    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
    set(table, size, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create);
    set(table, size, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)domain_destroy);
    set(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)register_string);
    set(table, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push);
    set(table, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
    return 1;
}
