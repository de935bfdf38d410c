#pragma once
// Output of the upgrade check (`check --mcore A,B`), text and JSON; the format is described in docs/user-guide.md
// ("Upgrade check").
#include <iosfwd>
#include <string>

#include "engine/revision_diff.hpp"

namespace mbl {

struct UpgradeReportHeader {
    std::string from, to;  // revision names
    int files_checked = 0;
};

void write_upgrade_text(std::ostream& out, const RevisionDiff& diff, const UpgradeReportHeader& header);
void write_upgrade_json(std::ostream& out, const RevisionDiff& diff, const UpgradeReportHeader& header);

}  // namespace mbl
