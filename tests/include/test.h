/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Minimal test harness for C tests: ASSERT_* print expected versus actual
 * with the line, and TEST() blocks print "[name] PASS|FAIL|SKIP" lines
 * that tests/run.sh counts.
 */
#ifndef MRC_TEST_H
#define MRC_TEST_H

#include <stdio.h>
#include <string.h>

struct test_state {
	int failed;	/* failures in the current test */
	int skipped;
	int total_failed;
};

extern struct test_state test_state;

/*
 * Registered tests: TEST_CASE(fn, "name") { ... } defines a test and adds
 * it to the binary's list before main() runs (a constructor appends it),
 * so a test file split over several .c files needs no hand-kept list.
 * Tests run in registration order: within a file, definition order; across
 * files, link order. A test must not rely on another having run first.
 */
struct test_case {
	const char *name;
	void (*fn)(void);
	struct test_case *next;
};

struct test_registry {
	struct test_case *head, **tail;
	unsigned int count;
};

extern struct test_registry test_registry;

#define TEST_STATE_DEFINE						\
	struct test_state test_state;					\
	struct test_registry test_registry = { NULL, &test_registry.head, 0 }

static inline void test_register(struct test_case *tc)
{
	*test_registry.tail = tc;
	test_registry.tail = &tc->next;
	test_registry.count++;
}

#define TEST_CASE(fn, name)						\
	static void fn(void);						\
	static struct test_case fn##__case = { (name), fn, NULL };	\
	__attribute__((constructor)) static void fn##__register(void)	\
	{								\
		test_register(&fn##__case);				\
	}								\
	static void fn(void)

#define ASSERT_TRUE(cond, what) ({					\
	int __ok = !!(cond);						\
	if (!__ok) {							\
		fprintf(stderr, "  %s:%d: %s: expected true\n",	\
			__FILE__, __LINE__, (what));			\
		test_state.failed++;					\
	}								\
	__ok;								\
})

#define ASSERT_EQ(actual, expected, what) ({				\
	long long __a = (long long)(actual), __e = (long long)(expected); \
	int __ok = __a == __e;						\
	if (!__ok) {							\
		fprintf(stderr, "  %s:%d: %s: expected %lld (0x%llx), got %lld (0x%llx)\n", \
			__FILE__, __LINE__, (what), __e,		\
			(unsigned long long)__e, __a, (unsigned long long)__a); \
		test_state.failed++;					\
	}								\
	__ok;								\
})

#define ASSERT_MEM_EQ(actual, expected, len, what) ({			\
	const unsigned char *__a = (const void *)(actual);		\
	const unsigned char *__e = (const void *)(expected);		\
	size_t __i, __n = (len);					\
	int __ok = 1;							\
	for (__i = 0; __i < __n; __i++) {				\
		if (__a[__i] != __e[__i]) {				\
			fprintf(stderr, "  %s:%d: %s: byte %zu: expected 0x%02x, got 0x%02x\n", \
				__FILE__, __LINE__, (what), __i, __e[__i], __a[__i]); \
			test_state.failed++;				\
			__ok = 0;					\
			break;						\
		}							\
	}								\
	__ok;								\
})

#define TEST_SKIP(why) do {						\
	fprintf(stderr, "  skipped: %s\n", (why));			\
	test_state.skipped = 1;						\
} while (0)

/* Run fn() as one named test and print its verdict line. */
#define RUN_TEST(name, fn) do {						\
	test_state.failed = 0;						\
	test_state.skipped = 0;						\
	fn();								\
	if (test_state.failed)						\
		test_state.total_failed++;				\
	printf("[%s] %s\n", (name), test_state.failed ? "FAIL" :	\
	       test_state.skipped ? "SKIP" : "PASS");			\
	fflush(stdout);							\
} while (0)

/* Run every registered test in order (RUN_TEST on each). */
#define RUN_REGISTERED_TESTS() do {					\
	for (struct test_case *__tc = test_registry.head; __tc;		\
	     __tc = __tc->next)						\
		RUN_TEST(__tc->name, __tc->fn);				\
} while (0)

#define TEST_EXIT() (test_state.total_failed ? 1 : 0)

#endif
