#pragma once
// Fixes as text: rules describe a fix as FieldEdits; the front end of the file holding each field turns them into
// text edits (resolve_fix_edits); apply_edits applies a set of non-overlapping edits to one text.
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/source_manager.hpp"
#include "core/value.hpp"

namespace mbl {

// Fills Fix::edits of each diagnostic that has FieldEdits, from `root` (the config tree the diagnostics were found
// in, before linting) and the file texts. A fix whose edits cannot all be made keeps empty edits: it is shown, never
// applied.
// Fix::anchors: the entries the edits are made at.
void resolve_fix_edits(std::vector<Diagnostic>& diags, const Value& root, const SourceManager& sources);

// The lines of the function that holds `anchor` (an entry of `root`'s model), as far as `root` shows them: the
// model entries set through the same calls as the one set at `anchor`. A config that was set at any of them ran
// that function, and so the line a fix at `anchor` edits or follows, whatever it set later.
std::vector<SourceRange> lines_run_with(const Value& root, const SourceRange& anchor);

// Whether making `fix` (worked out for the config `own`) would change the config `other` too: an entry it replaces
// or removes that `other`'s value still comes from, or a field it adds in code `other` also ran (lines_run_with)
// where `other` does not write that field itself. The anchor concerned, or null.
const SourceRange* fix_changes(const Fix& fix, const Value& own, const Value& other);

// The configs of one file, their diagnostics (per_config[i] found in roots[i], recipe labels[i]): a fix whose edits
// would change another of them too (fix_changes) keeps no edits, unless that config has the same fix, and a note
// says why.
void withdraw_shared_fixes(std::vector<std::vector<Diagnostic>*> per_config, const std::vector<const Value*>& roots,
                           const std::vector<std::string>& labels);

struct EditOutcome {
    std::string text;
    std::size_t applied = 0;
};
// Applies edits to `text` (every edit's range is in this text). Returns nullopt when two edits overlap.
std::optional<EditOutcome> apply_edits(std::string_view text, std::vector<TextEdit> edits);

// Whether two fixes make the same text edits.
bool same_edits(const Fix& a, const Fix& b);

// The edits of a fix that fall in `file`, sorted.
std::vector<TextEdit> edits_in(const Fix& fix, const std::string& file);

}  // namespace mbl
