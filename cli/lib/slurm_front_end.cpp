#include "slurm_front_end.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <functional>
#include <iterator>

#include "submit_options.hpp"

namespace sched::cli {
namespace {

constexpr std::array<SlurmCommand, 9> kCommands = {
    SlurmCommand::Sbatch,   SlurmCommand::Srun,   SlurmCommand::Squeue,
    SlurmCommand::Scancel,  SlurmCommand::Sinfo,  SlurmCommand::Sacct,
    SlurmCommand::Scontrol, SlurmCommand::Salloc, SlurmCommand::Sprio,
};

// What a front end does with one of its options.
enum class Use {
  Pass,    // the same option of the `sched` command
  Rename,  // another name of the `sched` command (OptionRule::to)
  Drop,    // means nothing different here (squeue -a: there are no hidden partitions)
  Ignore,  // accepted with a warning (OptionRule::why)
};

struct OptionRule {
  std::string_view name;  // long name without dashes; may be empty
  char short_name = 0;
  ValueKind value = ValueKind::Required;
  Use use = Use::Pass;
  std::string_view to = {};   // Use::Rename: the `sched` option, dashes included
  std::string_view why = {};  // Use::Ignore
};

// One option as written on the command line.
struct Given {
  OptionRule rule;      // a copy: its texts are static, the rule lists need not outlive it
  std::string written;  // "--user", "-u"
  std::optional<std::string> value;  // attached or the next word
};

struct Scan {
  std::vector<Given> options;
  std::vector<std::string> operands;  // from the first operand on (with `stop`), else all
};

FrontEndError unsupported(SlurmCommand command, const std::string& what) {
  return FrontEndError(what + " is not supported by this " + std::string(name_of(command)) +
                       " (sched's front end; see docs/user-guide.md, \"Coming from Slurm\")");
}

const OptionRule* find_rule(std::span<const OptionRule> rules, std::string_view name) {
  for (const OptionRule& rule : rules) {
    if (name.size() == 1 ? rule.short_name == name[0] : rule.name == name) return &rule;
  }
  return nullptr;
}

// getopt's forms: --name=value, --name value, -x value, -xvalue, -xyz for
// flags x, y and z; "--" ends the options. With `stop`, the first operand
// ends them too (a script and its arguments, a command and its options).
Scan scan(SlurmCommand command, std::span<const OptionRule> rules,
          const std::vector<std::string>& words, bool stop) {
  Scan out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      out.operands.insert(out.operands.end(), words.begin() + static_cast<long>(i) + 1,
                          words.end());
      break;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (stop) {
        out.operands.insert(out.operands.end(), words.begin() + static_cast<long>(i), words.end());
        break;
      }
      out.operands.push_back(word);
      continue;
    }
    const auto take_value = [&](Given& given, std::optional<std::string> attached) {
      if (given.rule.value == ValueKind::None) {
        if (attached) throw FrontEndError(given.written + " takes no value");
      } else if (attached) {
        given.value = std::move(attached);
      } else if (given.rule.value == ValueKind::Required) {
        if (i + 1 >= words.size()) throw FrontEndError(given.written + " needs a value");
        given.value = words[++i];
      }
      out.options.push_back(std::move(given));
    };
    if (word.starts_with("--")) {
      const auto equals = word.find('=');
      Given given;
      given.written = word.substr(0, equals);
      const OptionRule* rule = find_rule(rules, std::string_view(given.written).substr(2));
      if (!rule) throw unsupported(command, "option " + given.written);
      given.rule = *rule;
      take_value(given, equals == std::string::npos
                            ? std::nullopt
                            : std::optional<std::string>(word.substr(equals + 1)));
      continue;
    }
    for (std::size_t at = 1; at < word.size(); ++at) {  // -x, -xvalue, -xyz
      Given given;
      given.written = std::string("-") + word[at];
      const OptionRule* rule = find_rule(rules, std::string_view(word).substr(at, 1));
      if (!rule) throw unsupported(command, "option " + given.written);
      given.rule = *rule;
      if (rule->value != ValueKind::None) {
        take_value(given, at + 1 < word.size() ? std::optional<std::string>(word.substr(at + 1))
                                               : std::nullopt);
        break;
      }
      take_value(given, std::nullopt);
    }
  }
  return out;
}

// The options of `sched` that do what `options` do, in the order given.
void append_options(const std::vector<Given>& options, Translation& out) {
  for (const Given& given : options) {
    const OptionRule& rule = given.rule;
    switch (rule.use) {
      case Use::Drop:
        break;
      case Use::Ignore: {
        const std::string separator = given.written.starts_with("--") ? "=" : " ";
        out.warnings.push_back(given.written + (given.value ? separator + *given.value : "") +
                               " ignored (" + std::string(rule.why) + ")");
        break;
      }
      case Use::Pass:
      case Use::Rename: {
        const std::string name =
            rule.use == Use::Rename ? std::string(rule.to) : "--" + std::string(rule.name);
        // --name=value keeps an optional value with its option.
        out.args.push_back(given.value ? name + "=" + *given.value : name);
        break;
      }
    }
  }
}

// sbatch's options as `sched submit` has them (cli/lib/submit_options.hpp):
// ours pass; Slurm's that mean nothing here are dropped with the warning an
// #SBATCH line would give.
std::vector<OptionRule> submission_rules() {
  std::vector<OptionRule> rules;
  for (const OptionInfo& option : submit_option_table()) {
    rules.push_back({option.name,
                     option.short_name,
                     option.value,
                     option.slurm_only ? Use::Ignore : Use::Pass,
                     {},
                     option.help});
  }
  return rules;
}

std::vector<std::string> values_of(const std::vector<Given>& options, std::string_view name) {
  std::vector<std::string> out;
  for (const Given& given : options) {
    if (given.rule.name == name && given.value) out.push_back(*given.value);
  }
  return out;
}

Translation sbatch(const std::vector<std::string>& args) {
  std::vector<OptionRule> rules = submission_rules();
  rules.push_back({"wrap", 0, ValueKind::Required});
  rules.push_back({"parsable", 0, ValueKind::None});
  Translation out{{"submit"}, {}};
  const Scan given = scan(SlurmCommand::Sbatch, rules, args, /*stop=*/true);
  append_options(given.options, out);
  out.args.insert(out.args.end(), given.operands.begin(), given.operands.end());
  return out;
}

// salloc [options] [command [args...]]: `sched alloc`.
Translation salloc(const std::vector<std::string>& args) {
  Translation out{{"alloc"}, {}};
  const std::vector<OptionRule> rules = submission_rules();
  const Scan given = scan(SlurmCommand::Salloc, rules, args, /*stop=*/true);
  append_options(given.options, out);
  out.args.insert(out.args.end(), given.operands.begin(), given.operands.end());
  return out;
}

// srun --mpi's types as `sched run --mpi` names them: Slurm calls its PMIx
// plugin by version (pmix_v3, pmix_v4, ...); what sched does not serve is an
// error, not a step that starts without its MPI wire-up.
void translate_mpi_types(std::vector<Given>& options) {
  for (Given& given : options) {
    if (given.rule.name != "mpi" || !given.value) continue;
    std::string& type = *given.value;
    if (type.starts_with("pmix")) type = "pmix";
    if (type != "pmix" && type != "pmi2" && type != "pmi1" && type != "none") {
      throw FrontEndError("--mpi=" + type +
                          " is not supported by this srun: sched serves pmix (pmix_v3, pmix_v4, "
                          "...), pmi2, pmi1 and none");
    }
  }
}

// srun: inside a job a step on its nodes (`sched run`); outside one, an
// allocation for the command alone (`sched alloc ... -- sched run ...`), as
// srun makes one when there is none.
Translation srun(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> step_rules = {
      {"nodes", 'N', ValueKind::Required},
      {"ntasks", 'n', ValueKind::Required},
      // ---- tasks (issue 16 item 1)
      {"ntasks-per-node", 0, ValueKind::Required},
      {"cpus-per-task", 'c', ValueKind::Required},
      {"distribution", 'm', ValueKind::Required},
      {"cpu-bind", 0, ValueKind::Required},
      {"jobid", 0, ValueKind::Required},
      {"job-name", 'J', ValueKind::Required, Use::Ignore, {}, "steps have no names here"},
      {"mpi", 0, ValueKind::Required},
      {"nodelist", 'w', ValueKind::Required},
      {"label", 'l', ValueKind::None, Use::Ignore, {}, "output is not labelled here"},
      {"partition",
       'p',
       ValueKind::Required,
       Use::Ignore,
       {},
       "a step runs in its job's partition"},
  };
  // --jobid names the allocation: a step there, from wherever.
  const bool in_allocation =
      context.inside_job || std::any_of(args.begin(), args.end(), [](const std::string& word) {
        return word == "--jobid" || word.starts_with("--jobid=");
      });
  if (in_allocation) {
    Translation out{{"run"}, {}};
    Scan given = scan(SlurmCommand::Srun, step_rules, args, /*stop=*/true);
    if (given.operands.empty()) throw FrontEndError("no command to run");
    translate_mpi_types(given.options);
    append_options(given.options, out);
    out.args.insert(out.args.end(), given.operands.begin(), given.operands.end());
    return out;
  }
  std::vector<OptionRule> rules = submission_rules();
  for (const OptionRule& rule : step_rules) {
    if (rule.use == Use::Ignore && !find_rule(rules, rule.name)) rules.push_back(rule);
  }
  // --mpi is the step's alone (-w, the allocation's, is a submission option).
  rules.push_back(*find_rule(step_rules, "mpi"));
  Scan given = scan(SlurmCommand::Srun, rules, args, /*stop=*/true);
  if (given.operands.empty()) throw FrontEndError("no command to run");
  translate_mpi_types(given.options);
  Translation out{{"alloc"}, {}};
  std::vector<Given> allocation;
  std::copy_if(given.options.begin(), given.options.end(), std::back_inserter(allocation),
               [](const Given& option) { return option.rule.name != "mpi"; });
  append_options(allocation, out);
  if (values_of(given.options, "job-name").empty()) {
    out.args.push_back("--job-name=" +
                       std::filesystem::path(given.operands.front()).filename().string());
  }
  out.args.insert(out.args.end(), {context.self, "run"});
  // The step takes the task options too (the allocation is sized by them).
  for (const char* name : {"ntasks", "cpus-per-task", "distribution", "cpu-bind", "mpi"}) {
    for (const std::string& value : values_of(given.options, name)) {
      out.args.push_back("--" + std::string(name) + "=" + value);
    }
  }
  out.args.insert(out.args.end(), given.operands.begin(), given.operands.end());
  return out;
}

// The option rules of the listing commands, and their `sched` command.
Translation listing(SlurmCommand command, std::string_view sched_command,
                    std::span<const OptionRule> rules, const std::vector<std::string>& args,
                    const FrontEndContext& context, bool operands_are_ids) {
  const Scan given = scan(command, rules, args, /*stop=*/false);
  if (!given.operands.empty() && !operands_are_ids) {
    throw unsupported(command, "the operand '" + given.operands.front() + "'");
  }
  Translation out{{std::string(sched_command)}, {}};
  for (const Given& option : given.options) {
    if (option.rule.name == "me") {  // --me: the caller's jobs
      out.args.push_back("--user=" + context.user);
    } else {
      append_options({option}, out);
    }
  }
  out.args.insert(out.args.end(), given.operands.begin(), given.operands.end());
  return out;
}

// Issue 20 item 1: squeue -p, sinfo -p and sacct -r list one partition.
constexpr std::string_view kCancelPartition =
    "scancel here selects by ids, user, name and state (`sched queue --partition` lists a "
    "partition's jobs)";

Translation squeue(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> rules = {
      {"user", 'u', ValueKind::Required},
      {"me", 0, ValueKind::None},
      {"jobs", 'j', ValueKind::Required},
      {"states", 't', ValueKind::Required},
      {"format", 'o', ValueKind::Required},
      {"noheader", 'h', ValueKind::None},
      {"start", 0, ValueKind::None},
      {"json", 0, ValueKind::None},
      {"array", 'r', ValueKind::None},
      {"all", 'a', ValueKind::None, Use::Drop},
      {"long", 'l', ValueKind::None, Use::Ignore, {}, "the default listing has the long columns"},
      {"partition", 'p', ValueKind::Required},
  };
  return listing(SlurmCommand::Squeue, "queue", rules, args, context, false);
}

Translation scancel(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> rules = {
      {"user", 'u', ValueKind::Required},
      {"me", 0, ValueKind::None},
      {"name", 'n', ValueKind::Required},
      {"jobname", 0, ValueKind::Required, Use::Rename, "--name"},
      {"state", 't', ValueKind::Required},
      {"partition", 'p', ValueKind::Required, Use::Ignore, {}, kCancelPartition},
  };
  Translation out = listing(SlurmCommand::Scancel, "cancel", rules, args, context, true);
  if (out.args.size() == 1) throw FrontEndError("no job id and no filter (-u, -n, -t) given");
  return out;
}

Translation sinfo(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> rules = {
      {"Node", 'N', ValueKind::None, Use::Rename, "--long"},
      {"states", 't', ValueKind::Required},
      {"nodes", 'n', ValueKind::Required},
      {"json", 0, ValueKind::None},
      {"all", 'a', ValueKind::None, Use::Drop},
      {"long", 'l', ValueKind::None, Use::Ignore, {}, "the listing has no more columns"},
      {"partition", 'p', ValueKind::Required},
  };
  return listing(SlurmCommand::Sinfo, "nodes", rules, args, context, false);
}

Translation sacct(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> rules = {
      {"jobs", 'j', ValueKind::Required},
      {"user", 'u', ValueKind::Required},
      {"state", 's', ValueKind::Required},
      {"starttime", 'S', ValueKind::Required},
      {"endtime", 'E', ValueKind::Required},
      {"long", 'l', ValueKind::None},
      {"json", 0, ValueKind::None},
      // Steps are not accounted apart here: every line is an allocation.
      {"allocations", 'X', ValueKind::None, Use::Drop},
      {"allusers", 'a', ValueKind::None, Use::Drop},
      {"partition", 'r', ValueKind::Required, Use::Rename, "--partition"},
  };
  return listing(SlurmCommand::Sacct, "acct", rules, args, context, false);
}

Translation sprio(const std::vector<std::string>& args, const FrontEndContext& context) {
  static const std::vector<OptionRule> rules = {
      {"jobs", 'j', ValueKind::Required},
      {"user", 'u', ValueKind::Required},
      {"me", 0, ValueKind::None},
      {"weights", 'w', ValueKind::None},
  };
  return listing(SlurmCommand::Sprio, "prio", rules, args, context, false);
}

// NAME=VALUE words of `scontrol update`, keys compared as Slurm does
// (without case).
std::optional<std::string> field(const std::vector<std::string>& words, std::string_view key) {
  for (const std::string& word : words) {
    const auto equals = word.find('=');
    if (equals != key.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size(); ++i) {
      same = same && std::tolower(static_cast<unsigned char>(word[i])) ==
                         std::tolower(static_cast<unsigned char>(key[i]));
    }
    if (same) return word.substr(equals + 1);
  }
  return std::nullopt;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// scontrol show job|node|partition, hold|uhold|release|requeue, update
// NodeName=... or PartitionName=...
Translation scontrol(const std::vector<std::string>& args) {
  const Scan given = scan(SlurmCommand::Scontrol, {}, args, /*stop=*/true);
  const std::vector<std::string>& words = given.operands;
  if (words.empty()) throw FrontEndError("no command given (show, hold, release, requeue, update)");
  const std::string verb = lower(words[0]);
  const std::vector<std::string> rest(words.begin() + 1, words.end());
  if (verb == "show") {
    const std::string what = rest.empty() ? "" : lower(rest[0]);
    if ((what == "job" || what == "jobs") && rest.size() == 2) return {{"show", rest[1]}, {}};
    if (what == "job" || what == "jobs") throw FrontEndError("scontrol show job needs one job id");
    if (what == "node" || what == "nodes") {
      Translation out{{"nodes", "--long"}, {}};
      if (rest.size() == 2) out.args.insert(out.args.end(), {"--nodes", rest[1]});
      if (rest.size() > 2) throw FrontEndError("scontrol show node takes one node name");
      return out;
    }
    if (what == "partition" || what == "partitions") {
      Translation out{{"partition"}, {}};
      if (rest.size() == 2) out.args.push_back("--partition=" + rest[1]);
      if (rest.size() > 2) throw FrontEndError("scontrol show partition takes one partition name");
      return out;
    }
    throw unsupported(SlurmCommand::Scontrol, "show " + (rest.empty() ? "" : rest[0]));
  }
  if (verb == "hold" || verb == "uhold" || verb == "release" || verb == "requeue") {
    if (rest.empty()) throw FrontEndError("scontrol " + verb + " needs job ids");
    Translation out{{verb == "uhold" ? "hold" : verb}, {}};
    out.args.insert(out.args.end(), rest.begin(), rest.end());
    return out;
  }
  if (verb == "update" && field(rest, "PartitionName")) {
    const auto state = field(rest, "State");
    if (!state || rest.size() > 3 || (rest.size() == 3 && !field(rest, "Reason"))) {
      throw unsupported(SlurmCommand::Scontrol,
                        "update other than PartitionName=NAME State=UP|DRAIN|DOWN [Reason=...]");
    }
    const std::string to = lower(*state);
    if (to != "up" && to != "drain" && to != "down") {
      throw unsupported(SlurmCommand::Scontrol, "State=" + *state + " of a partition");
    }
    Translation out{{"partition", "set", *field(rest, "PartitionName"), to}, {}};
    if (auto reason = field(rest, "Reason")) out.args.insert(out.args.end(), {"--reason", *reason});
    return out;
  }
  if (verb == "update") {
    const auto node = field(rest, "NodeName");
    const auto state = field(rest, "State");
    if (!node || !state || rest.size() > 3 || (rest.size() == 3 && !field(rest, "Reason"))) {
      throw unsupported(SlurmCommand::Scontrol,
                        "update other than NodeName=NAME State=DRAIN|RESUME [Reason=...]");
    }
    const std::string to = lower(*state);
    if (to == "drain") {
      Translation out{{"nodes", "drain", *node}, {}};
      if (auto reason = field(rest, "Reason"))
        out.args.insert(out.args.end(), {"--reason", *reason});
      return out;
    }
    if (to == "resume" || to == "undrain") return {{"nodes", "resume", *node}, {}};
    throw unsupported(SlurmCommand::Scontrol, "State=" + *state);
  }
  throw unsupported(SlurmCommand::Scontrol, "the command '" + words[0] + "'");
}

}  // namespace

std::span<const SlurmCommand> slurm_commands() { return kCommands; }

std::string_view name_of(SlurmCommand command) {
  switch (command) {
    case SlurmCommand::Sbatch:
      return "sbatch";
    case SlurmCommand::Srun:
      return "srun";
    case SlurmCommand::Squeue:
      return "squeue";
    case SlurmCommand::Scancel:
      return "scancel";
    case SlurmCommand::Sinfo:
      return "sinfo";
    case SlurmCommand::Sacct:
      return "sacct";
    case SlurmCommand::Scontrol:
      return "scontrol";
    case SlurmCommand::Salloc:
      return "salloc";
    case SlurmCommand::Sprio:
      return "sprio";
  }
  return "";
}

std::optional<SlurmCommand> slurm_command(std::string_view program) {
  const auto slash = program.rfind('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  for (SlurmCommand command : kCommands) {
    if (name_of(command) == program) return command;
  }
  return std::nullopt;
}

Translation translate(SlurmCommand command, const std::vector<std::string>& args,
                      const FrontEndContext& context) {
  // --help and --version among the options: the `sched` command's own.
  for (const std::string& word : args) {
    if (word == "--") break;
    if (word == "--version") return {{"--version"}, {}};
    if (word == "--help") {
      static constexpr std::array<std::string_view, 9> kHelpOf = {
          "submit", "run", "queue", "cancel", "nodes", "acct", "show", "alloc", "prio"};
      return {{std::string(kHelpOf[static_cast<std::size_t>(command)]), "--help"}, {}};
    }
    const bool operands_end_options = command == SlurmCommand::Sbatch ||
                                      command == SlurmCommand::Srun ||
                                      command == SlurmCommand::Salloc;
    if (operands_end_options && !word.starts_with('-')) break;
  }
  switch (command) {
    case SlurmCommand::Sbatch:
      return sbatch(args);
    case SlurmCommand::Srun:
      return srun(args, context);
    case SlurmCommand::Squeue:
      return squeue(args, context);
    case SlurmCommand::Scancel:
      return scancel(args, context);
    case SlurmCommand::Sinfo:
      return sinfo(args, context);
    case SlurmCommand::Sacct:
      return sacct(args, context);
    case SlurmCommand::Scontrol:
      return scontrol(args);
    case SlurmCommand::Salloc:
      return salloc(args);
    case SlurmCommand::Sprio:
      return sprio(args, context);
  }
  throw FrontEndError("unknown front end");
}

}  // namespace sched::cli
