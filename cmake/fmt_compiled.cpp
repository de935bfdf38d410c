// fmt's compiled part, built once (cmake/ThirdParty.cmake). The other sources include fmt's headers without
// FMT_HEADER_ONLY, which would have every translation unit compile fmt's implementation again (the rules' first
// unity batch: 6.8 s of CPU with it, 4.1 s without; the whole release build with tests: 902 CPU-s, 763 without). Debian's libfmt-dev ships the implementation header (format-inl.h) but no static
// library, which the release's self-contained binary needs; so both builds compile it here, with the same flags.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// What format.h declares `extern template` for char: defined here, as fmt's own library does.
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
