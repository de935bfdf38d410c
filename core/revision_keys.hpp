#pragma once
// The keys of the per-revision facts that code reads by name: the "enums" of schemas/mcore/<rev>.json
// (revision_enum::recompute_method), its "known_crashes" (known_crash::layernorm_recompute_local_impl) and the codes
// its "rejections" list. The build generates the list (build/generated/revision_keys.def, by
// cmake/RevisionKeys.cmake) from the revision files, so a key that no revision file has does not compile, where a
// misspelt string would have read an empty list and silently turned a rule off.
#include <string_view>

namespace mbl {

// A key of a revision's "enums".
class RevisionEnum {
public:
    constexpr std::string_view str() const { return name_; }
    friend constexpr bool operator==(RevisionEnum a, RevisionEnum b) { return a.name_ == b.name_; }

private:
    friend struct RevisionKeys;
    constexpr explicit RevisionEnum(std::string_view name) : name_(name) {}
    std::string_view name_;
};

// An id of a revision's "known_crashes".
class KnownCrash {
public:
    constexpr std::string_view str() const { return id_; }
    friend constexpr bool operator==(KnownCrash a, KnownCrash b) { return a.id_ == b.id_; }

private:
    friend struct RevisionKeys;
    constexpr explicit KnownCrash(std::string_view id) : id_(id) {}
    std::string_view id_;
};

// Makes the generated constants; nothing else can make a key.
struct RevisionKeys {
    static constexpr RevisionEnum revision_enum(std::string_view name) { return RevisionEnum(name); }
    static constexpr KnownCrash known_crash(std::string_view id) { return KnownCrash(id); }
};

namespace revision_enum {
#define MBL_REVISION_ENUM(NAME) inline constexpr RevisionEnum NAME = RevisionKeys::revision_enum(#NAME);
#define MBL_KNOWN_CRASH(IDENT, ID)
#include "revision_keys.def"
#undef MBL_REVISION_ENUM
#undef MBL_KNOWN_CRASH
}  // namespace revision_enum

namespace known_crash {
#define MBL_REVISION_ENUM(NAME)
#define MBL_KNOWN_CRASH(IDENT, ID) inline constexpr KnownCrash IDENT = RevisionKeys::known_crash(ID);
#include "revision_keys.def"
#undef MBL_REVISION_ENUM
#undef MBL_KNOWN_CRASH
}  // namespace known_crash

}  // namespace mbl
