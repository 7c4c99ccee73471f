/*
 * Growth for the type-safe vectors of base.h. The macros keep the element
 * type; this one function does the arithmetic: it doubles the capacity (at
 * least 8 elements, at least what is needed), checks every product and sum
 * for overflow, and reallocates through the funnel.
 *
 * The element pointer is passed as the address of a `T *` and read and
 * written with memcpy, which is valid because every object pointer has the
 * same representation on the platforms we build for (Linux, ILP32/LP64).
 */
#include "base.h"

#include <errno.h>

int vec_grow_(void *pdata, size_t *cap, size_t len, size_t add, size_t esz, bool soft)
{
	size_t need, bytes;
	void *data;

	if (!tb_add_ok(len, add, &need) || !tb_mul_ok(need, esz, &bytes)) {
		if (soft)
			return -ENOMEM;
		TB_CHECK(!"vector size overflows");
	}
	if (need <= *cap)
		return 0;

	size_t ncap = *cap < 4 ? 8 : *cap * 2;
	if (ncap < *cap || ncap < need || !tb_mul_ok(ncap, esz, &bytes)) {
		ncap = need;
		bytes = need * esz; /* checked above */
	}

	memcpy(&data, pdata, sizeof data);
	void *nd = soft ? tb_try_realloc(data, bytes) : tb_realloc(data, bytes);
	if (!nd)
		return -ENOMEM;
	memcpy(pdata, &nd, sizeof nd);
	*cap = ncap;
	return 0;
}
