/* SPDX-License-Identifier: MIT */
/*
 * io_join.c: joining an output another process created (ooc_file_join): the
 * ranks of one split job open the temporary file rank 0 made with
 * OOC_FILE_SHARED, locked shared as the creator's is, to write their own
 * rows. Never truncates, reserves, commits or removes the file: that is the
 * creator's (io_file.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handle.h"
#include "io.h"

ooc_status_t ooc_file_join(ooc_handle_t *h, const char *path, const ooc_file_spec_t *spec, unsigned flags,
                           ooc_file_t **file)
{
    if (h == NULL) return OOC_ERR_INVALID_HANDLE;
    ooc_err_clear(&h->err);
    ooc_err_t *err = &h->err;
    OOC_RETURN_ERROR_IF(path == NULL || spec == NULL || file == NULL, err, OOC_ERR_NULL_ARG,
                        "ooc_file_join: path, spec or file is NULL");
    OOC_RETURN_ERROR_IF((flags & ~(unsigned)OOC_FILE_RESUME) != 0, err, OOC_ERR_INVALID_PARAM,
                        "ooc_file_join: unknown flags 0x%x (only OOC_FILE_RESUME)", flags);
    ooc_file_spec_t s;
    unsigned char hdr[OOC_FILE_HEADER_CAP];
    size_t hlen = 0;
    uint64_t bytes;
    OOC_FORWARD(ooc_file_output_spec(err, path, spec, &s, hdr, &hlen, &bytes));

    ooc_file_t *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path)) == NULL ||
        (f->tmp_path = malloc(strlen(path) + sizeof OOC_TMP_SUFFIX)) == NULL) {
        if (f) free(f->path);
        free(f);
        return OOC_ERR(err, OOC_ERR_HOST_MEMORY, "%s: out of memory for the file object", path);
    }
    strcpy(f->tmp_path, path);
    strcat(f->tmp_path, OOC_TMP_SUFFIX);
    const char *tmp = f->tmp_path;
    ooc_status_t st = OOC_SUCCESS;
    char eb[128];
    unsigned mode = 0;
    int fd = ooc_open_regular(tmp, O_RDWR | O_NOFOLLOW, &mode);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, tmp,
                              "ooc_file_join: there is no %s: the process that creates the output "
                              "(ooc_file_create with OOC_FILE_SHARED) has not made it yet", tmp);
        else if (e == ELOOP)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, tmp, "%s is a symbolic link: refusing to write through it", tmp);
        else if (e == EINVAL)
            st = OOC_ERR_FILE(err, OOC_ERR_IO, tmp, "%s is %s, not a temporary output", tmp, ooc_file_kind(mode));
        else
            st = OOC_ERR_FILE(err, ooc_errno_status(e), tmp, "open %s: %s", tmp, ooc_io_errtext(e, eb, sizeof eb));
        goto fail;
    }
    /* shared with the creator and the other ranks; BUSY while someone holds
     * it alone (another job, or a creator still making it) */
    st = ooc_fd_lock(fd, tmp, 1, err);
    if (st != OOC_SUCCESS) goto fail;
    if (!ooc_fd_is_path(fd, tmp)) {
        st = OOC_ERR_FILE(err, OOC_ERR_IO, tmp, "ooc_file_join: %s was renamed or removed while it was opened", tmp);
        goto fail;
    }
    if (!ooc_tmp_matches(fd, tmp, hlen + bytes, hdr, hlen, &f->id)) {
        st = OOC_ERR_FILE(err, OOC_ERR_FORMAT, tmp,
                          "ooc_file_join: %s is not the output %lld x %lld as given (its size or header differs "
                          "from what ooc_file_create makes for this spec)",
                          tmp, (long long)s.rows, (long long)s.cols);
        goto fail;
    }
    f->fd = fd;
    f->spec = s;
    f->data_offset = hlen;
    f->data_bytes = bytes;
    f->writable = 1;
    f->joined = 1;
    f->resumed = (flags & OOC_FILE_RESUME) != 0;
    *file = f;
    return OOC_SUCCESS;
fail:
    if (fd >= 0) close(fd);
    free(f->path);
    free(f->tmp_path);
    free(f);
    return st;
}

int ooc_file_resumed(const ooc_file_t *f) { return f != NULL && f->resumed; }
