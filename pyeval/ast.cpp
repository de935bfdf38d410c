// Conversion of tree-sitter's tree into the compact syntax tree of ast.hpp, and the located syntax errors of a
// module (the only file of the evaluator that sees tree-sitter types).
#include "pyeval/ast.hpp"

#include <fmt/format.h>
#include <tree_sitter/api.h>

#include <cstring>
#include <memory>
#include <unordered_map>

#include "core/input_errors.hpp"
#include "core/limits.hpp"
#include "pyeval/ast_cache.hpp"
#include "pyeval/python_scan.hpp"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace mbl::py {
namespace {

const std::unordered_map<std::string_view, Kind>& kind_table() {
    static const std::unordered_map<std::string_view, Kind> table = {
        {"module", Kind::Module},
        {"block", Kind::Block},
        {"comment", Kind::Comment},
        {"expression_statement", Kind::ExpressionStatement},
        {"assignment", Kind::Assignment},
        {"augmented_assignment", Kind::AugmentedAssignment},
        {"return_statement", Kind::ReturnStatement},
        {"if_statement", Kind::IfStatement},
        {"elif_clause", Kind::ElifClause},
        {"else_clause", Kind::ElseClause},
        {"for_statement", Kind::ForStatement},
        {"while_statement", Kind::WhileStatement},
        {"try_statement", Kind::TryStatement},
        {"except_clause", Kind::ExceptClause},
        {"except_group_clause", Kind::ExceptClause},
        {"finally_clause", Kind::FinallyClause},
        {"with_statement", Kind::WithStatement},
        {"with_clause", Kind::WithClause},
        {"with_item", Kind::WithItem},
        {"function_definition", Kind::FunctionDefinition},
        {"class_definition", Kind::ClassDefinition},
        {"decorated_definition", Kind::DecoratedDefinition},
        {"decorator", Kind::Decorator},
        {"import_statement", Kind::ImportStatement},
        {"import_from_statement", Kind::ImportFromStatement},
        {"future_import_statement", Kind::FutureImportStatement},
        {"aliased_import", Kind::AliasedImport},
        {"dotted_name", Kind::DottedName},
        {"relative_import", Kind::RelativeImport},
        {"import_prefix", Kind::ImportPrefix},
        {"wildcard_import", Kind::WildcardImport},
        {"pass_statement", Kind::PassStatement},
        {"break_statement", Kind::BreakStatement},
        {"continue_statement", Kind::ContinueStatement},
        {"raise_statement", Kind::RaiseStatement},
        {"assert_statement", Kind::AssertStatement},
        {"global_statement", Kind::GlobalStatement},
        {"nonlocal_statement", Kind::NonlocalStatement},
        {"delete_statement", Kind::DeleteStatement},
        {"match_statement", Kind::MatchStatement},
        {"case_clause", Kind::CaseClause},
        {"type_alias_statement", Kind::TypeAliasStatement},
        {"parameters", Kind::Parameters},
        {"lambda_parameters", Kind::LambdaParameters},
        {"default_parameter", Kind::DefaultParameter},
        {"typed_parameter", Kind::TypedParameter},
        {"typed_default_parameter", Kind::TypedDefaultParameter},
        {"list_splat_pattern", Kind::ListSplatPattern},
        {"dictionary_splat_pattern", Kind::DictionarySplatPattern},
        {"keyword_separator", Kind::KeywordSeparator},
        {"positional_separator", Kind::PositionalSeparator},
        {"type", Kind::Type},
        {"identifier", Kind::Identifier},
        {"attribute", Kind::Attribute},
        {"subscript", Kind::Subscript},
        {"generic_type", Kind::GenericType},
        {"type_parameter", Kind::TypeParameter},
        {"union_type", Kind::UnionType},
        {"slice", Kind::Slice},
        {"call", Kind::Call},
        {"argument_list", Kind::ArgumentList},
        {"keyword_argument", Kind::KeywordArgument},
        {"list_splat", Kind::ListSplat},
        {"dictionary_splat", Kind::DictionarySplat},
        {"string", Kind::String},
        {"string_start", Kind::StringStart},
        {"string_content", Kind::StringContent},
        {"string_end", Kind::StringEnd},
        {"escape_sequence", Kind::EscapeSequence},
        {"interpolation", Kind::Interpolation},
        {"concatenated_string", Kind::ConcatenatedString},
        {"integer", Kind::Integer},
        {"float", Kind::Float},
        {"true", Kind::True},
        {"false", Kind::False},
        {"none", Kind::None},
        {"ellipsis", Kind::Ellipsis},
        {"list", Kind::List},
        {"tuple", Kind::Tuple},
        {"dictionary", Kind::Dictionary},
        {"pair", Kind::Pair},
        {"set", Kind::Set},
        {"parenthesized_expression", Kind::ParenthesizedExpression},
        {"expression_list", Kind::ExpressionList},
        {"pattern_list", Kind::PatternList},
        {"tuple_pattern", Kind::TuplePattern},
        {"list_pattern", Kind::ListPattern},
        {"binary_operator", Kind::BinaryOperator},
        {"unary_operator", Kind::UnaryOperator},
        {"not_operator", Kind::NotOperator},
        {"boolean_operator", Kind::BooleanOperator},
        {"comparison_operator", Kind::ComparisonOperator},
        {"conditional_expression", Kind::ConditionalExpression},
        {"lambda", Kind::Lambda},
        {"list_comprehension", Kind::ListComprehension},
        {"dictionary_comprehension", Kind::DictionaryComprehension},
        {"set_comprehension", Kind::SetComprehension},
        {"generator_expression", Kind::GeneratorExpression},
        {"for_in_clause", Kind::ForInClause},
        {"if_clause", Kind::IfClause},
        {"named_expression", Kind::NamedExpression},
        {"await", Kind::Await},
        {"yield", Kind::Yield},
        {"format_specifier", Kind::FormatSpecifier},
        {"type_conversion", Kind::TypeConversion},
        {"line_continuation", Kind::LineContinuation},
        {"escape_interpolation", Kind::EscapeInterpolation},
    };
    return table;
}

Field field_from_name(const char* name) {
    if (!name) return Field::None;
    static const std::unordered_map<std::string_view, Field> table = {
        {"left", Field::Left},
        {"right", Field::Right},
        {"type", Field::Type},
        {"operator", Field::Operator},
        {"operators", Field::Operators},
        {"object", Field::Object},
        {"attribute", Field::AttributeName},
        {"value", Field::Value},
        {"subscript", Field::Subscript},
        {"function", Field::Function},
        {"arguments", Field::Arguments},
        {"name", Field::Name},
        {"body", Field::Body},
        {"condition", Field::Condition},
        {"consequence", Field::Consequence},
        {"alternative", Field::Alternative},
        {"parameters", Field::Parameters},
        {"return_type", Field::ReturnType},
        {"superclasses", Field::Superclasses},
        {"definition", Field::Definition},
        {"module_name", Field::ModuleName},
        {"alias", Field::Alias},
        {"key", Field::Key},
        {"argument", Field::Argument},
        {"subject", Field::Subject},
        {"cause", Field::Cause},
        {"expression", Field::Expression},
        {"format_specifier", Field::FormatSpec},
        {"guard", Field::Guard},
    };
    auto it = table.find(name);
    return it == table.end() ? Field::None : it->second;
}

// The grammar's symbols and fields as the evaluator's kinds and fields, by their numbers: a node's type and field
// name are then a table read instead of a string hash (the conversion visits every node of every module).
struct GrammarTables {
    std::vector<Kind> kind_of_symbol;
    std::vector<Field> field_of_id;
};

const GrammarTables& grammar_tables() {
    static const GrammarTables tables = [] {
        GrammarTables t;
        const TSLanguage* language = tree_sitter_python();
        const auto& kinds = kind_table();
        t.kind_of_symbol.resize(ts_language_symbol_count(language), Kind::Other);
        for (TSSymbol sym = 0; sym < t.kind_of_symbol.size(); ++sym)
            if (const char* name = ts_language_symbol_name(language, sym))
                if (auto it = kinds.find(name); it != kinds.end()) t.kind_of_symbol[sym] = it->second;
        t.field_of_id.resize(ts_language_field_count(language) + 1, Field::None);
        for (TSFieldId id = 1; id < t.field_of_id.size(); ++id)
            t.field_of_id[id] = field_from_name(ts_language_field_name_for_id(language, id));
        return t;
    }();
    return tables;
}

struct ParserDeleter {
    void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
    void operator()(TSTree* t) const { ts_tree_delete(t); }
};

// The first ERROR or MISSING node in document order, for the syntax-error location.
std::optional<TSNode> first_error(TSNode root) {
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    std::optional<TSNode> found;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cursor);
        if (ts_node_is_missing(n) || (ts_node_is_named(n) && std::strcmp(ts_node_type(n), "ERROR") == 0)) {
            found = n;
            break;
        }
        if (ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&cursor)) continue;
        bool moved = false;
        while (!moved) {
            if (ts_tree_cursor_goto_next_sibling(&cursor)) {
                moved = true;
            } else if (!ts_tree_cursor_goto_parent(&cursor)) {
                break;
            }
        }
        if (!moved) break;
    }
    ts_tree_cursor_delete(&cursor);
    return found;
}

// The first bracket that is never closed (or a closer without opener) in `text`, skipping strings and comments.
struct BracketProblem {
    size_t pos;
    char c;
    bool unclosed;
};
std::optional<BracketProblem> bracket_problem(std::string_view text) {
    std::vector<std::pair<size_t, char>> stack;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '#') {
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            const bool triple = text.substr(i, 3) == std::string(3, c);
            const size_t q = triple ? 3 : 1;
            size_t j = i + q;
            for (; j < text.size(); ++j) {
                if (text[j] == '\\') {
                    ++j;
                    continue;
                }
                if (!triple && text[j] == '\n') break;
                if (text.substr(j, q) == std::string(q, c)) break;
            }
            i = j + q - 1;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') stack.emplace_back(i, c);
        if (c == ')' || c == ']' || c == '}') {
            char want = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (stack.empty() || stack.back().second != want) return BracketProblem{i, c, false};
            stack.pop_back();
        }
    }
    if (!stack.empty()) return BracketProblem{stack.front().first, stack.front().second, true};
    return std::nullopt;
}

// The diagnostic for what scan_python refused: the file is not parsed.
Diagnostic scan_problem(const std::string& file, std::string_view text, const PythonScan& scan) {
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < scan.at && i < text.size(); ++i)
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    const SourceRange at = SourceRange::point(file, line, static_cast<int>(scan.at - line_start) + 1);
    Diagnostic d;
    switch (scan.problem) {
        case PythonScan::Problem::TooManyTokens:
            d = input_error(InputError::LimitExceeded, at,
                            fmt::format("the file holds more than the limit of {} Python tokens (--limit "
                                        "python-tokens); it is not parsed",
                                        limit(Limit::PythonTokens)));
            d.notes.push_back(Note{SourceRange{}, "recipe modules hold a few thousand tokens; one this large would "
                                                  "take the linter seconds and gigabytes to read"});
            return d;
        case PythonScan::Problem::TooManyBrackets:
            d = input_error(InputError::Syntax, at,
                            fmt::format("invalid Python syntax: brackets nested more than {} deep (Python's "
                                        "\"too many nested parentheses\")",
                                        kPythonMaxBrackets));
            break;
        case PythonScan::Problem::TooManyIndentLevels:
            d = input_error(InputError::Syntax, at,
                            fmt::format("invalid Python syntax: more than {} levels of indentation (Python's "
                                        "\"too many levels of indentation\")",
                                        kPythonMaxIndentLevels));
            break;
        case PythonScan::Problem::TooManyBareContinuations:
            d = input_error(InputError::LimitExceeded, at,
                            fmt::format("more than {} lines in a row hold only a line continuation (a backslash); the "
                                        "file is not parsed",
                                        kPythonMaxBareContinuations));
            return d;
        default:
            d = input_error(InputError::Syntax, at,
                            fmt::format("invalid Python syntax: f-string fields nested more than {} deep (Python's "
                                        "\"f-string: expressions nested too deeply\")",
                                        kPythonMaxFstringNesting));
            break;
    }
    d.notes.push_back(Note{SourceRange{}, "Python cannot import this file, so the linter does not evaluate it"});
    return d;
}

}  // namespace

NodeId Ast::field(NodeId id, Field f) const {
    const Node& n = (*this)[id];
    for (std::uint32_t i = 0; i < n.kid_count; ++i) {
        NodeId k = kids[n.first_kid + i];
        if (nodes[k].field == f) return k;
    }
    return kNoNode;
}

std::vector<NodeId> Ast::named_kids(NodeId id) const {
    std::vector<NodeId> out;
    const Node& n = (*this)[id];
    out.reserve(n.kid_count);
    for (std::uint32_t i = 0; i < n.kid_count; ++i) {
        NodeId k = kids[n.first_kid + i];
        if (nodes[k].kind != Kind::Operator && nodes[k].kind != Kind::Comment) out.push_back(k);
    }
    return out;
}

namespace {

// A file that cannot be parsed still has a tree: one empty module.
ParseOutcome unparsed(ParseOutcome out, Diagnostic why) {
    out.syntax_error = std::move(why);
    out.ast.nodes.push_back(Node{Kind::Module});
    out.ast.root = 0;
    return out;
}

// The line and column (1-based) of a byte offset.
SourceRange point_at(const std::string& file, const std::string& text, std::size_t pos) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return SourceRange::point(file, static_cast<int>(line), static_cast<int>(col));
}

// The first error tree-sitter recovered from, as Python would report it; nullopt when it found none.
std::optional<Diagnostic> syntax_error_of(const std::string& file, const std::string& text, TSNode root) {
    if (!ts_node_has_error(root)) return std::nullopt;
    auto err = first_error(root);
    if (!err) return std::nullopt;
    const TSPoint p = ts_node_start_point(*err), e = ts_node_end_point(*err);
    std::string message = ts_node_is_missing(*err)
                              ? fmt::format("invalid Python syntax: expected \"{}\" here", ts_node_type(*err))
                              : "invalid Python syntax";
    SourceRange r{file, static_cast<int>(p.row) + 1, static_cast<int>(p.column) + 1, static_cast<int>(e.row) + 1,
                  static_cast<int>(e.column) + 1};
    if (r.end_line == r.line && r.end_column <= r.column) r.end_column = r.column + 1;
    // An unbalanced bracket is the most common cause, and tree-sitter's recovery hides where it is.
    if (!ts_node_is_missing(*err))
        if (auto b = bracket_problem(text)) {
            r = point_at(file, text, b->pos);
            message = b->unclosed ? fmt::format("invalid Python syntax: this \"{}\" is never closed", b->c)
                                  : fmt::format("invalid Python syntax: unmatched \"{}\"", b->c);
        }
    Diagnostic d = input_error(InputError::Syntax, r, message);
    d.notes.push_back(Note{SourceRange{}, "Python cannot import this file, so the linter does not evaluate it"});
    return d;
}

// Copies tree-sitter's tree into the Ast, depth first without recursion: the kids of the open nodes wait on one
// stack (each open node knows where its own start) and are written out contiguously when their node closes.
class TreeCopy {
public:
    explicit TreeCopy(Ast& ast) : ast_(ast), tables_(grammar_tables()) {}

    void copy(TSNode root) {
        TSTreeCursor cursor = ts_tree_cursor_new(root);
        ast_.root = make(root, Field::None, Kind::Module);
        stack_.push_back({ast_.root, 0});
        if (ts_tree_cursor_goto_first_child(&cursor))
            while (visit(cursor) || next(cursor)) {
            }
        while (!stack_.empty()) close();
        ts_tree_cursor_delete(&cursor);
    }

private:
    struct Open {
        NodeId id;
        std::size_t first_pending;
    };

    // Keeps the cursor's node (named nodes but comments, and operators); true when it went down into its kids.
    bool visit(TSTreeCursor& cursor) {
        TSNode n = ts_tree_cursor_current_node(&cursor);
        const TSFieldId field_id = ts_tree_cursor_current_field_id(&cursor);
        const Field field = field_id < tables_.field_of_id.size() ? tables_.field_of_id[field_id] : Field::None;
        Kind kind = Kind::Other;
        bool keep = false;
        if (ts_node_is_named(n)) {
            const TSSymbol sym = ts_node_symbol(n);
            kind = sym < tables_.kind_of_symbol.size() ? tables_.kind_of_symbol[sym] : Kind::Other;
            keep = kind != Kind::Comment;
        } else if (field == Field::Operator || field == Field::Operators) {
            kind = Kind::Operator;
            keep = true;
        }
        if (!keep) return false;
        NodeId id = make(n, field, kind);
        pending_.push_back(id);
        if (!ts_tree_cursor_goto_first_child(&cursor)) return false;
        stack_.push_back({id, pending_.size()});
        return true;
    }

    // Moves to the next sibling, closing finished nodes on the way up; false at the end of the tree.
    bool next(TSTreeCursor& cursor) {
        while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
            if (!ts_tree_cursor_goto_parent(&cursor)) return false;
            if (stack_.size() > 1) close();
        }
        return true;
    }

    NodeId make(TSNode n, Field field, Kind kind) {
        Node node;
        node.kind = kind;
        node.field = field;
        node.start = ts_node_start_byte(n);
        node.end = ts_node_end_byte(n);
        TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
        node.line = s.row + 1;
        node.end_line = e.row + 1;
        ast_.nodes.push_back(node);
        return static_cast<NodeId>(ast_.nodes.size() - 1);
    }

    void close() {
        const Open top = stack_.back();
        stack_.pop_back();
        ast_.nodes[top.id].first_kid = static_cast<std::uint32_t>(ast_.kids.size());
        ast_.nodes[top.id].kid_count = static_cast<std::uint32_t>(pending_.size() - top.first_pending);
        ast_.kids.insert(ast_.kids.end(), pending_.begin() + static_cast<std::ptrdiff_t>(top.first_pending),
                         pending_.end());
        pending_.resize(top.first_pending);
    }

    Ast& ast_;
    const GrammarTables& tables_;
    std::vector<Open> stack_;
    std::vector<NodeId> pending_;
};

}  // namespace

ParseOutcome parse_python(const std::string& file, std::string text, bool cacheable) {
    ParseOutcome out;
    Ast& ast = out.ast;
    ast.text = std::move(text);
    // Python reads "\r" alone as a line break (universal newlines); tree-sitter's grammar does not. One byte for
    // one: every offset stays where it was.
    for (std::size_t i = ast.text.find('\r'); i != std::string::npos; i = ast.text.find('\r', i + 1))
        if (i + 1 == ast.text.size() || ast.text[i + 1] != '\n') ast.text[i] = '\n';
    std::string blanked;  // ast.text with its comments blanked, what tree-sitter reads (python_scan.hpp)
    const PythonScan scan = scan_python(ast.text, limit(Limit::PythonTokens), &blanked);
    if (scan.problem != PythonScan::Problem::None) return unparsed(std::move(out), scan_problem(file, ast.text, scan));
    const std::string& parsed = scan.has_comments ? blanked : ast.text;
    auto line_starts = [&ast] {
        ast.line_starts.push_back(0);
        for (std::size_t i = ast.text.find('\n'); i != std::string::npos; i = ast.text.find('\n', i + 1))
            ast.line_starts.push_back(static_cast<std::uint32_t>(i + 1));
        ast.line_starts.shrink_to_fit();
    };
    if (std::optional<Ast> kept = cacheable ? load_cached_ast(parsed) : std::nullopt) {
        // Only trees without a syntax error are kept.
        ast.nodes = std::move(kept->nodes);
        ast.kids = std::move(kept->kids);
        ast.root = kept->root;
        line_starts();
        return out;
    }
    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    ts_parser_set_language(parser.get(), tree_sitter_python());
    std::unique_ptr<TSTree, TreeDeleter> tree(
        ts_parser_parse_string(parser.get(), nullptr, parsed.data(), static_cast<std::uint32_t>(parsed.size())));
    if (!tree)
        return unparsed(std::move(out), input_error(InputError::Syntax, SourceRange::point(file, 1, 1),
                                                    "the Python parser could not read this file"));
    TSNode root = ts_tree_root_node(tree.get());
    out.syntax_error = syntax_error_of(file, ast.text, root);

    line_starts();
    ast.nodes.reserve(ast.text.size() / 6 + 16);
    TreeCopy(ast).copy(root);
    // The tree lives as long as the run: a whole repository's trees are most of its memory, and growth by doubling
    // leaves up to half of each vector unused.
    ast.nodes.shrink_to_fit();
    ast.kids.shrink_to_fit();
    if (cacheable && !out.syntax_error) store_cached_ast(parsed, ast);
    return out;
}

}  // namespace mbl::py
