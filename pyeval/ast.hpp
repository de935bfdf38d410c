#pragma once
// A compact, immutable syntax tree of one Python module, converted once from tree-sitter's tree. Only this
// folder's ast.cpp sees tree-sitter types; the evaluator and everything above it work on this tree, which can be
// shared between threads because nothing mutates it after parsing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"

namespace mbl::py {

// The tree-sitter-python node types the evaluator understands; everything else is Other.
enum class Kind : std::uint8_t {
    Other,
    Module,
    Block,
    Comment,
    // statements
    ExpressionStatement,
    Assignment,
    AugmentedAssignment,
    ReturnStatement,
    IfStatement,
    ElifClause,
    ElseClause,
    ForStatement,
    WhileStatement,
    TryStatement,
    ExceptClause,
    FinallyClause,
    WithStatement,
    WithClause,
    WithItem,
    FunctionDefinition,
    ClassDefinition,
    DecoratedDefinition,
    Decorator,
    ImportStatement,
    ImportFromStatement,
    FutureImportStatement,
    AliasedImport,
    DottedName,
    RelativeImport,
    ImportPrefix,
    WildcardImport,
    PassStatement,
    BreakStatement,
    ContinueStatement,
    RaiseStatement,
    AssertStatement,
    GlobalStatement,
    NonlocalStatement,
    DeleteStatement,
    MatchStatement,
    CaseClause,
    TypeAliasStatement,
    // parameters
    Parameters,
    LambdaParameters,
    DefaultParameter,
    TypedParameter,
    TypedDefaultParameter,
    ListSplatPattern,
    DictionarySplatPattern,
    KeywordSeparator,
    PositionalSeparator,
    Type,
    GenericType,    // `List[int]` in an annotation (tree-sitter-python 0.23 parses annotations as types)
    TypeParameter,  // its `[int]`
    UnionType,      // `int | None` in an annotation
    // expressions
    Identifier,
    Attribute,
    Subscript,
    Slice,
    Call,
    ArgumentList,
    KeywordArgument,
    ListSplat,
    DictionarySplat,
    String,
    StringStart,
    StringContent,
    StringEnd,
    EscapeSequence,
    Interpolation,
    ConcatenatedString,
    Integer,
    Float,
    True,
    False,
    None,
    Ellipsis,
    List,
    Tuple,
    Dictionary,
    Pair,
    Set,
    ParenthesizedExpression,
    ExpressionList,
    PatternList,
    TuplePattern,
    ListPattern,
    BinaryOperator,
    UnaryOperator,
    NotOperator,
    BooleanOperator,
    ComparisonOperator,
    ConditionalExpression,
    Lambda,
    ListComprehension,
    DictionaryComprehension,
    SetComprehension,
    GeneratorExpression,
    ForInClause,
    IfClause,
    NamedExpression,
    Await,
    Yield,
    FormatSpecifier,
    TypeConversion,
    LineContinuation,
    EscapeInterpolation,
    // anonymous operator tokens kept because they carry meaning (`+`, `not in`, `and`, `+=` ...)
    Operator,
};

// Field names of tree-sitter-python that the evaluator reads.
enum class Field : std::uint8_t {
    None,
    Left,
    Right,
    Type,
    Operator,
    Operators,
    Object,
    AttributeName,
    Value,
    Subscript,
    Function,
    Arguments,
    Name,
    Body,
    Condition,
    Consequence,
    Alternative,
    Parameters,
    ReturnType,
    Superclasses,
    Definition,
    ModuleName,
    Alias,
    Key,
    Argument,
    Subject,
    Cause,
    Expression,
    FormatSpec,
    Guard,
};

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;

// Columns are not stored: Ast::col() counts them from the line's start (a whole repository's trees are most of the
// memory of a run, and a node is read for its place far less often than for its kind and kids).
struct Node {
    Kind kind = Kind::Other;
    Field field = Field::None;                   // the field this node fills in its parent
    std::uint32_t start = 0, end = 0;            // byte offsets
    std::uint32_t line = 0, end_line = 0;        // 1-based
    std::uint32_t first_kid = 0, kid_count = 0;  // into Ast::kids
};

class Ast {
public:
    std::string text;  // the module's source
    std::vector<Node> nodes;
    std::vector<NodeId> kids;
    std::vector<std::uint32_t>
        line_starts;  // byte offset of each line's first byte (lines end at '\n', as tree-sitter counts)
    NodeId root = kNoNode;

    // Accessors accept kNoNode (an absent field) and answer "nothing", so an unexpected tree never reads out of range.
    const Node& operator[](NodeId id) const { return id < nodes.size() ? nodes[id] : empty_; }
    Kind kind(NodeId id) const { return (*this)[id].kind; }
    std::string_view source(NodeId id) const {
        const Node& n = (*this)[id];
        if (n.end < n.start || n.end > text.size()) return {};
        return std::string_view(text).substr(n.start, n.end - n.start);
    }
    // 1-based byte columns of a node's first byte and of the byte after its end, as tree-sitter counts them.
    std::uint32_t col(NodeId id) const { return column_of((*this)[id].start, (*this)[id].line); }
    std::uint32_t end_col(NodeId id) const { return column_of((*this)[id].end, (*this)[id].end_line); }
    std::uint32_t count(NodeId id) const { return (*this)[id].kid_count; }
    NodeId kid(NodeId id, std::uint32_t i) const { return kids[nodes[id].first_kid + i]; }
    // First child filling `field`, or kNoNode.
    NodeId field(NodeId id, Field f) const;
    // Children that are not operator tokens or comments.
    std::vector<NodeId> named_kids(NodeId id) const;
    // The first of them, or kNoNode.
    NodeId first_named(NodeId id) const {
        auto named = named_kids(id);
        return named.empty() ? kNoNode : named.front();
    }

private:
    std::uint32_t column_of(std::uint32_t offset, std::uint32_t line) const {
        if (line == 0 || line > line_starts.size() || offset < line_starts[line - 1]) return 0;
        return offset - line_starts[line - 1] + 1;
    }
    static inline const Node empty_{};
};

struct ParseOutcome {
    Ast ast;
    std::optional<Diagnostic> syntax_error;  // IN002 at the first error, when the file does not parse
};

// Parses `text` (the contents of `file`, used in diagnostics). Never throws; deep nesting is fine (iterative).
// `cacheable`: a file read from disk, whose tree is kept between runs (pyeval/ast_cache.hpp); not an editor's buffer,
// which changes with every keystroke.
ParseOutcome parse_python(const std::string& file, std::string text, bool cacheable = false);

}  // namespace mbl::py
