/* SPDX-License-Identifier: MIT */
/* Status names, version, and the ISA choice with its DECODENUM_ISA override. */
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "testutil.h"

static void version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(dn_version(), DN_VERSION_NUMBER);
    assert_string_equal(dn_version_string(), DN_VERSION_STRING);
    assert_int_equal(DN_VERSION_NUMBER,
                     DN_VERSION_MAJOR * 10000 + DN_VERSION_MINOR * 100 + DN_VERSION_PATCH);
}

static void every_status_has_a_name(void **state)
{
    (void)state;
    assert_string_equal(dn_status_str(DN_OK), "ok");
    const char *seen[16] = {0};
    for (int s = DN_OK; s <= DN_ERR_OUT_OF_RANGE; s++) {
        const char *name = dn_status_str((dn_status)s);
        assert_non_null(name);
        assert_string_not_equal(name, "unknown status");
        for (int t = 0; t < s; t++) assert_string_not_equal(name, seen[t]);
        seen[s] = name;
    }
    assert_string_equal(dn_status_str((dn_status)999), "unknown status");
}

static void isa_names(void **state)
{
    (void)state;
    assert_string_equal(dn_isa_name(DN_ISA_SCALAR), "scalar");
    assert_string_equal(dn_isa_name(DN_ISA_AVX2), "avx2");
    assert_string_equal(dn_isa_name(DN_ISA_NEON), "neon");
    assert_string_equal(dn_isa_name(DN_ISA_AVX512), "avx512");
    /* AVX-512 is AVX2 and more: never the one without the other */
    assert_true(!dn_isa_available(DN_ISA_AVX512) || dn_isa_available(DN_ISA_AVX2));
    assert_string_equal(dn_isa_name((dn_isa)42), "unknown");
    assert_true(dn_isa_available(DN_ISA_SCALAR));
    assert_false(dn_isa_available((dn_isa)42));
}

/* What this process was started with decides the ISA and the note. */
static void env_override(void **state)
{
    (void)state;
    const char *want = getenv("DECODENUM_ISA");
    const char *expect = getenv("DN_TEST_EXPECT_ISA");
    const char *note_has = getenv("DN_TEST_EXPECT_NOTE");
    if (!expect) {
        /* no override: the best available */
        dn_isa best = dn_isa_available(DN_ISA_AVX512) ? DN_ISA_AVX512
                      : dn_isa_available(DN_ISA_AVX2) ? DN_ISA_AVX2
                      : dn_isa_available(DN_ISA_NEON) ? DN_ISA_NEON
                                                      : DN_ISA_SCALAR;
        if (want) skip();
        assert_int_equal(dn_isa_active(), best);
        return;
    }
    assert_string_equal(dn_isa_name(dn_isa_active()), expect);
    if (note_has) assert_non_null(strstr(dn_isa_note(), note_has));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_matches_header),
        cmocka_unit_test(every_status_has_a_name),
        cmocka_unit_test(isa_names),
        cmocka_unit_test(env_override),
    };
    return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
