// Slurm-style host lists: "n[01-04],gpu1" for n01 n02 n03 n04 gpu1. Used for
// SLURM_JOB_NODELIST (the node agent) and the NODELIST columns (the CLI).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sched::tasks {

// Compresses names into a host list, keeping their order (an allocation's
// first node is its leader, so expand_nodelist(compress_nodelist(v)) == v
// for any v). Neighbouring names that share a prefix and end in numbers of a
// compatible width join one bracket: n1 n2 n3 n5 → "n[1-3,5]", n008 n009
// n010 → "n[008-010]", n9 n10 → "n[9-10]"; n1 gpu1 n2 → "n1,gpu1,n2" (not
// sorted: callers sort first if they want it). Names must not contain ',',
// '[' or ']'.
std::string compress_nodelist(const std::vector<std::string>& names);

// Sorts names as people count them: by prefix, then by trailing number
// (n2 before n10), then as text (n01 before n1); what is not a name with a
// number sorts by its text among the prefixes.
void sort_nodelist(std::vector<std::string>& names);

// compress_nodelist of the names sorted, as squeue and sacct print node
// lists: n4 n2 n3 n1 → "n[1-4]", not "n[4,2-3,1]".
std::string compress_sorted_nodelist(std::vector<std::string> names);

// Expands a host list: "n[1-3,5],gpu1" → n1 n2 n3 n5 gpu1. Numbers are
// padded to the width of a range's first bound ("n[08-10]" → n08 n09 n10);
// several brackets in one name multiply out ("r[1-2]n[1-2]" → r1n1 r1n2 r2n1
// r2n2). An empty text is an empty list. Throws std::invalid_argument for
// malformed text (unbalanced or nested brackets, empty names, a backwards
// range, more than 100000 names).
std::vector<std::string> expand_nodelist(std::string_view text);

}  // namespace sched::tasks
