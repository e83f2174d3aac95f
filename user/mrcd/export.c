// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `mrcd --write-object FILE`: the BPF object with its maps declared at the
 * sizes this mrcd gives them (--max-qps, --max-contexts), for the standard
 * loaders (xdp-loader, ip link ... xdp obj, tc filter ... bpf obj).
 *
 * Why: those loaders reuse our pinned maps by name (LIBBPF_PIN_BY_NAME),
 * and libbpf reuses a pin only when its max_entries equals the object's
 * declaration. The build's object declares the compile-time defaults
 * (include/mrc/abi.h), mrcd sizes the maps at load (sizing.c): without a
 * copy declared at mrcd's sizes no standard loader could share the maps.
 *
 * How: a BTF-defined map's entry count is the element count of the array
 * its max_entries member points to. For every scaled map we append an
 * array of the wanted size (and a pointer to it) to the object's BTF and
 * point the member there; the old types stay, so every type id and string
 * offset of .BTF.ext stays valid. Then .BTF is replaced in a copy of the
 * ELF file (libelf lays it out again).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common/pins.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

/* The member of a map's BTF struct called name, or NULL. */
static struct btf_member *map_member(const struct btf *btf, __u32 struct_id,
				     const char *name)
{
	struct btf_type *t = (struct btf_type *)btf__type_by_id(btf, struct_id);
	struct btf_member *m = btf_members(t);

	for (__u16 i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return m;
	return NULL;
}

/* Point map struct_id's max_entries at a new array of n elements. */
static int resize_map_btf(struct btf *btf, __u32 struct_id, __u32 n)
{
	const struct btf_member *m = map_member(btf, struct_id, "max_entries");
	const struct btf_type *ptr, *arr_t;
	struct btf_member *w;
	struct btf_array arr;
	int arr_id, ptr_id;

	if (!m)
		return -ENOENT;
	ptr = btf__type_by_id(btf, m->type);
	if (!ptr || !btf_is_ptr(ptr))
		return -EINVAL;
	arr_t = btf__type_by_id(btf, ptr->type);
	if (!arr_t || !btf_is_array(arr_t))
		return -EINVAL;
	arr = *btf_array(arr_t);
	arr_id = btf__add_array(btf, arr.index_type, arr.type, n);
	if (arr_id < 0)
		return arr_id;
	ptr_id = btf__add_ptr(btf, arr_id);
	if (ptr_id < 0)
		return ptr_id;
	/* Adding may move the types: look the member up again. */
	w = map_member(btf, struct_id, "max_entries");
	w->type = (__u32)ptr_id;
	return 0;
}

/* Every scaled map of the .maps section declared at mrcd's sizes. */
static int resize_maps_btf(const struct agent *a, struct btf *btf)
{
	int sec = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	const struct btf_var_secinfo *v;
	const struct btf_type *t;
	int n_resized = 0;

	if (sec < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, (__u32)sec);
	v = btf_var_secinfos(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, v++) {
		/* Re-read: the section's type moves when types are added. */
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		const struct mrc_pin_spec *s;
		int struct_id, err;

		s = mrc_pin_spec(mrc_pin_by_name(btf__name_by_offset(btf, var->name_off)));
		if (!s || s->scale == MRC_PIN_FIXED)
			continue;
		struct_id = btf__resolve_type(btf, var->type);
		err = struct_id > 0 ?
		      resize_map_btf(btf, (__u32)struct_id,
				     mrc_pin_entries(s, a->opt.max_qps, a->opt.max_ctx)) :
		      -EINVAL;
		if (err) {
			pr_err("--write-object: cannot resize %s in BTF: %s\n", s->name,
			       strerror(-err));
			return err;
		}
		n_resized++;
		t = btf__type_by_id(btf, (__u32)sec);
		v = btf_var_secinfos(t) + i;
	}
	return n_resized ? 0 : -ENOENT;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", name))
			return scn;
	return NULL;
}

/* The object's bytes into path, then its .BTF replaced by raw. */
static int write_elf(const char *path, const void *elf_bytes, size_t size,
		     const void *raw, __u32 raw_size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	Elf_Data *data;
	Elf_Scn *scn;
	Elf *elf;
	int err = -EIO;

	if (fd < 0)
		return -errno;
	if (write(fd, elf_bytes, size) != (ssize_t)size) {
		close(fd);
		return -EIO;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	scn = elf ? find_section(elf, ".BTF") : NULL;
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (data) {
		data->d_buf = (void *)raw;
		data->d_size = raw_size;
		elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY);
		if (elf_update(elf, ELF_C_WRITE) >= 0)
			err = 0;
	}
	if (err)
		pr_err("--write-object: libelf: %s\n", elf_errmsg(-1));
	elf_end(elf);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Open what we wrote as libbpf will: every scaled map at the wanted size. */
static int check_written(const struct agent *a, const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	const struct mrc_pin_spec *s;
	struct bpf_map *map;
	int err = libbpf_get_error(obj);

	if (err)
		return err;
	bpf_object__for_each_map(map, obj) {
		s = mrc_pin_spec(mrc_pin_by_name(bpf_map__name(map)));
		if (s && bpf_map__max_entries(map) !=
			 mrc_pin_entries(s, a->opt.max_qps, a->opt.max_ctx)) {
			pr_err("--write-object: %s came out with %u entries\n", s->name,
			       bpf_map__max_entries(map));
			err = -EPROTO;
		}
	}
	bpf_object__close(obj);
	return err;
}

/* The object as built (the skeleton's bytes) into path. */
static int write_file(const char *path, const void *bytes, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, bytes, size) != (ssize_t)size)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int write_sized_object(const struct agent *a, const char *path)
{
	size_t size;
	const void *elf_bytes = mrc__elf_bytes(&size);
	struct btf *btf = NULL;
	const void *raw = NULL;
	__u32 raw_size = 0;
	int err;

	err = write_file(path, elf_bytes, size);
	if (!err) {
		btf = btf__parse_elf(path, NULL);
		err = btf ? 0 : -errno;
	}
	if (!err)
		err = resize_maps_btf(a, btf);
	if (!err) {
		raw = btf__raw_data(btf, &raw_size);
		err = raw ? 0 : -ENOMEM;
	}
	if (!err)
		err = write_elf(path, elf_bytes, size, raw, raw_size);
	if (!err)
		err = check_written(a, path);
	btf__free(btf);
	if (err) {
		pr_err("--write-object %s: %s\n", path, strerror(-err));
		unlink(path);
		return err;
	}
	pr_err("wrote %s: maps sized for --max-qps %u --max-contexts %u\n", path,
	       a->opt.max_qps, a->opt.max_ctx);
	return 0;
}
