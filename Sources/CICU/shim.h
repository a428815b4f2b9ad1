// ICU's common library (Debian's libicu-dev): Unicode normalization for ContentMatching.
//
// ICU renames every C function with its major version (`unorm2_normalize` is a macro for
// `unorm2_normalize_72`), and Swift imports only the renamed declarations. These wrappers give
// the few functions ContentMatching calls names that do not change with the installed version,
// and turn `UErrorCode` into a plain int.
#ifndef CICU_SHIM_H
#define CICU_SHIM_H
#include <stdbool.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utypes.h>

/// The status `cicu_normalize` returns when `capacity` was too small (ICU's U_BUFFER_OVERFLOW_ERROR).
enum { CICU_BUFFER_OVERFLOW = U_BUFFER_OVERFLOW_ERROR };

/// NFKC followed by full case folding (ICU's NFKC_Casefold); NULL when ICU's data is missing.
static inline const UNormalizer2 *cicu_nfkc_casefold(void) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFKCCasefoldInstance(&status);
    return U_SUCCESS(status) ? normalizer : NULL;
}

/// Canonical decomposition (NFD); NULL when ICU's data is missing.
static inline const UNormalizer2 *cicu_nfd(void) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFDInstance(&status);
    return U_SUCCESS(status) ? normalizer : NULL;
}

/// Canonical composition (NFC); NULL when ICU's data is missing.
static inline const UNormalizer2 *cicu_nfc(void) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *normalizer = unorm2_getNFCInstance(&status);
    return U_SUCCESS(status) ? normalizer : NULL;
}

/// Normalizes `length` UTF-16 units of `source` into `destination`.
///
/// Returns the length of the result (the length needed when it did not fit); `*status` is 0 on
/// success (or an ICU warning, below 0), CICU_BUFFER_OVERFLOW when `capacity` was too small, or
/// another ICU error code.
static inline int32_t cicu_normalize(
    const UNormalizer2 *normalizer, const UChar *source, int32_t length, UChar *destination,
    int32_t capacity, int *status) {
    UErrorCode code = U_ZERO_ERROR;
    int32_t written = unorm2_normalize(normalizer, source, length, destination, capacity, &code);
    *status = (int)code;
    return written;
}

/// Whether normalizing text before `scalar` and from `scalar` on separately gives the same result
/// as normalizing it whole.
static inline bool cicu_has_boundary_before(const UNormalizer2 *normalizer, UChar32 scalar) {
    return unorm2_hasBoundaryBefore(normalizer, scalar) != 0;
}

/// Whether `scalar` is a nonspacing mark (general category Mn): the diacritics removed by matching.
static inline bool cicu_is_nonspacing_mark(UChar32 scalar) {
    return u_charType(scalar) == U_NON_SPACING_MARK;
}
#endif
