use super::*;
use proptest::prelude::*;

const BANNER: &str =
    "**Pass through EXACTLY as-is** — NO summarizing, NO rephrasing, NO commentary";

fn kinds(parsed: &Parsed) -> Vec<FindingKind> {
    parsed.findings.iter().map(|f| f.kind).collect()
}

fn only_block(parsed: &Parsed) -> &Block {
    let blocks: Vec<_> = parsed.blocks().collect();
    assert_eq!(blocks.len(), 1, "{parsed:#?}");
    blocks[0]
}

fn strict_ok(text: &str) -> Parsed {
    let parsed = parse(text, Mode::Strict);
    assert!(parsed.is_valid(), "{:#?}", parsed.findings);
    parsed
}

// --- The reference validator's ten cases ---

#[test]
fn reference_valid_final() {
    let text = "=== AOP-FINAL | agent=doc-retriever | format=markdown | lines=450 ===\n\n# Document Content\n\nThis is the content.\n\n=== END-AOP-FINAL ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.kind, BlockType::Final);
    assert_eq!(
        block.content,
        "\n# Document Content\n\nThis is the content.\n"
    );
    assert_eq!(block.end_line, Some(7));
}

#[test]
fn reference_valid_error() {
    let text = "=== AOP-ERROR | agent=doc-qa-agentic | code=NO_RESULTS ===\n\nNo documents found matching your query.\n\n=== END-AOP-ERROR ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.kind, BlockType::Error);
    assert_eq!(block.attr("code"), Some("NO_RESULTS"));
}

#[test]
fn reference_missing_end() {
    let text = "=== AOP-FINAL | agent=test ===\n\nContent without end marker.";
    let parsed = parse(text, Mode::Strict);
    assert!(!parsed.is_valid());
    assert_eq!(kinds(&parsed), [FindingKind::MissingEnd]);
    assert_eq!(parsed.findings[0].line, 1);
    assert!(parsed.findings[0].message.contains("END-AOP-FINAL"));
    let block = only_block(&parsed);
    assert_eq!(block.end_line, None);
    assert_eq!(block.content, "\nContent without end marker.");
}

#[test]
fn reference_invalid_type() {
    let text = "=== AOP-INVALID | agent=test ===\n\nContent.\n\n=== END-AOP-INVALID ===";
    let parsed = parse(text, Mode::Strict);
    assert!(!parsed.is_valid());
    assert_eq!(kinds(&parsed), [FindingKind::UnknownType]);
    assert_eq!(
        only_block(&parsed).kind,
        BlockType::Unknown("INVALID".into())
    );
}

/// The seed's bare examples are valid even in strict mode; the missing
/// `agent` is still reported, as a warning.
#[test]
fn reference_missing_attribute_warns_and_stays_valid() {
    let text = "=== AOP-FINAL ===\n\nContent.\n\n=== END-AOP-FINAL ===";
    let parsed = parse(text, Mode::Strict);
    assert!(parsed.is_valid());
    assert_eq!(kinds(&parsed), [FindingKind::MissingAttribute]);
    assert_eq!(parsed.findings[0].severity, Severity::Warning);
    assert!(parsed.findings[0].message.contains("agent"));
}

#[test]
fn reference_no_marker() {
    let parsed = parse("This is plain output without any markers.", Mode::Strict);
    assert!(!parsed.is_valid());
    assert_eq!(kinds(&parsed), [FindingKind::UnmarkedOutput]);
    assert_eq!(
        parsed.segments,
        [Segment::Text {
            text: "This is plain output without any markers.".into(),
            line: 1
        }]
    );
}

#[test]
fn reference_mismatched_end() {
    let text = "=== AOP-FINAL | agent=test ===\n\nContent.\n\n=== END-AOP-ERROR ===";
    let parsed = parse(text, Mode::Strict);
    assert!(!parsed.is_valid());
    assert_eq!(kinds(&parsed), [FindingKind::MismatchedEnd]);
    assert_eq!(parsed.findings[0].line, 5);
    assert_eq!(only_block(&parsed).content, "\nContent.\n");
}

#[test]
fn reference_several_blocks() {
    let text = "=== AOP-CONTEXT | type=metadata ===\n{\"version\": \"1.0\"}\n=== END-AOP-CONTEXT ===\n\n=== AOP-FINAL | agent=doc-retriever | lines=100 ===\n\nMain content here.\n\n=== END-AOP-FINAL ===";
    let parsed = strict_ok(text);
    let blocks: Vec<_> = parsed.blocks().collect();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].json, Some(serde_json::json!({"version": "1.0"})));
    assert_eq!(blocks[1].start_line, 5);
    assert_eq!(parsed.segments.len(), 3);
    assert!(parsed.segments[1].is_blank_text());
}

#[test]
fn reference_doc_retriever_attributes() {
    let text = "=== AOP-FINAL | agent=doc-retriever | format=markdown | lines=450 | source=https://code.claude.com/docs/en/skills ===\n\n# Agent Skills\n\n[Full 450 lines of content here...]\n\n---\n**Source:** https://code.claude.com/docs/en/skills\n**Path:** md_docs/Claude_Code_Docs@latest/Agent Skills/docContent.md\n\n=== END-AOP-FINAL ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.attr("agent"), Some("doc-retriever"));
    assert_eq!(block.attr("format"), Some("markdown"));
    assert_eq!(block.attr("lines"), Some("450"));
    assert_eq!(
        block.attr("source"),
        Some("https://code.claude.com/docs/en/skills")
    );
}

#[test]
fn reference_doc_qa_attributes() {
    let text = "=== AOP-FINAL | agent=doc-qa-agentic | confidence=0.92 | sources=3 ===\n\n## Hooks\n\n### Configuration\nHooks are configured in `.claude/hooks.json`...\n\n=== END-AOP-FINAL ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.attr("agent"), Some("doc-qa-agentic"));
    assert_eq!(block.attr("confidence"), Some("0.92"));
    assert_eq!(block.attr("sources"), Some("3"));
}

// --- The seed's examples ---

#[test]
fn seed_example_document_retrieval_keeps_banner() {
    let content = format!(
        "{BANNER}\n\n# Agent Skills\n\n[450 lines of content]\n\n---\n**Source:** https://code.claude.com/docs/en/skills\n**Document Set:** Claude_Code_Docs:latest\n"
    );
    let text = format!(
        "=== AOP-FINAL | agent=doc-retriever | format=markdown | lines=<total_lines> | source={{doc_dir}} ===\n{content}\n=== END-AOP-FINAL ===\n"
    );
    let parsed = strict_ok(&text);
    let block = only_block(&parsed);
    assert_eq!(block.content, content);
    assert!(block.content.starts_with(BANNER));
    assert_eq!(block.attr("source"), Some("{doc_dir}"));
    assert_eq!(parsed.segments.len(), 1, "no trailing text segment");
}

#[test]
fn seed_example_error_output() {
    let text = "=== AOP-ERROR | agent=doc-retriever | code=DOC_NOT_FOUND ===\n\nNo documents found matching query: \"nonexistent topic\"\n\n**Suggestions:**\n- Try rephrasing your query\n\n=== END-AOP-ERROR ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.attr("code"), Some("DOC_NOT_FOUND"));
    assert!(block.content.contains("- Try rephrasing your query\n"));
}

#[test]
fn seed_example_context_then_final() {
    let text = format!(
        "=== AOP-CONTEXT ===\n{{\"metadata\": \"values\", \"stats\": {{\"n\": 2}}}}\n=== END-AOP-CONTEXT ===\n\n=== AOP-FINAL | agent=a ===\n{BANNER}\n[main content]\n=== END-AOP-FINAL ==="
    );
    let parsed = strict_ok(&text);
    let blocks: Vec<_> = parsed.blocks().collect();
    assert_eq!(blocks[0].json.as_ref().unwrap()["stats"]["n"], 2);
    assert_eq!(blocks[1].content, format!("{BANNER}\n[main content]"));
}

#[test]
fn seed_example_intermediate_and_stream() {
    let text = "=== AOP-INTERMEDIATE ===\n[content that can be processed]\n=== END-AOP-INTERMEDIATE ===\n=== AOP-STREAM ===\n[chunk 1 of content]\n=== END-AOP-STREAM ===\n\n=== AOP-STREAM ===\n[chunk 2 of content]\n=== END-AOP-STREAM ===\n";
    let parsed = strict_ok(text);
    let kinds: Vec<_> = parsed.blocks().map(|b| b.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            BlockType::Intermediate,
            BlockType::Stream,
            BlockType::Stream
        ]
    );
}

// --- Further behaviour ---

#[test]
fn attribute_values_may_contain_spaces_and_equals() {
    let text =
        "=== AOP-FINAL | agent=doc retriever v2 | query=a = b |  ===\nx\n=== END-AOP-FINAL ===";
    let parsed = strict_ok(text);
    let block = only_block(&parsed);
    assert_eq!(block.attr("agent"), Some("doc retriever v2"));
    assert_eq!(block.attr("query"), Some("a = b"));
    assert_eq!(block.attributes.len(), 2);
}

#[test]
fn malformed_attributes_are_reported() {
    let parsed = parse(
        "=== AOP-INTERMEDIATE | novalue | =x ===\ny\n=== END-AOP-INTERMEDIATE ===",
        Mode::Lenient,
    );
    assert_eq!(
        kinds(&parsed),
        [
            FindingKind::MalformedAttribute,
            FindingKind::MalformedAttribute
        ]
    );
    let parsed = parse(
        "=== AOP-INTERMEDIATE trailing ===\ny\n=== END-AOP-INTERMEDIATE ===",
        Mode::Lenient,
    );
    assert_eq!(kinds(&parsed), [FindingKind::MalformedAttribute]);
}

#[test]
fn text_outside_blocks_is_kept_in_order_and_reported() {
    let text =
        "Intro line\n=== AOP-INTERMEDIATE ===\nbody\n=== END-AOP-INTERMEDIATE ===\n\nOutro\n";
    let parsed = parse(text, Mode::Strict);
    assert_eq!(parsed.segments.len(), 3);
    assert_eq!(
        parsed.segments[0],
        Segment::Text {
            text: "Intro line\n".into(),
            line: 1
        }
    );
    assert_eq!(
        parsed.segments[2],
        Segment::Text {
            text: "\nOutro\n".into(),
            line: 5
        }
    );
    let lines: Vec<_> = parsed.findings.iter().map(|f| (f.kind, f.line)).collect();
    assert_eq!(
        lines,
        [
            (FindingKind::UnmarkedOutput, 1),
            (FindingKind::UnmarkedOutput, 6)
        ]
    );
}

#[test]
fn nested_markers_stay_content_and_are_reported() {
    let text = "=== AOP-FINAL | agent=a ===\nbefore\n=== AOP-ERROR ===\ninner\n=== END-AOP-ERROR ===\nafter\n=== END-AOP-FINAL ===";
    let parsed = parse(text, Mode::Strict);
    assert_eq!(kinds(&parsed), [FindingKind::NestedMarker]);
    assert_eq!(parsed.findings[0].line, 3);
    let block = only_block(&parsed);
    assert_eq!(
        block.content,
        "before\n=== AOP-ERROR ===\ninner\n=== END-AOP-ERROR ===\nafter"
    );
    assert_eq!(block.end_line, Some(7));
}

#[test]
fn unclosed_nested_marker_does_not_swallow_the_outer_end() {
    let text = "=== AOP-FINAL | agent=a ===\n=== AOP-STREAM ===\nx\n=== END-AOP-FINAL ===\ntail";
    let parsed = parse(text, Mode::Lenient);
    assert_eq!(
        kinds(&parsed),
        [FindingKind::NestedMarker, FindingKind::UnmarkedOutput]
    );
    assert_eq!(parsed.blocks().next().unwrap().end_line, Some(4));
}

#[test]
fn stray_end_marker_is_reported() {
    let text = "=== END-AOP-FINAL ===\n=== AOP-INTERMEDIATE ===\nx\n=== END-AOP-INTERMEDIATE ===";
    let parsed = parse(text, Mode::Strict);
    assert_eq!(
        kinds(&parsed),
        [FindingKind::StrayEnd, FindingKind::UnmarkedOutput]
    );
}

#[test]
fn lenient_records_the_same_findings_as_warnings() {
    let text = "hello\n=== AOP-BOGUS ===\n=== AOP-FINAL ===\nx";
    let strict = parse(text, Mode::Strict);
    let lenient = parse(text, Mode::Lenient);
    assert!(!strict.is_valid());
    assert!(lenient.is_valid());
    assert!(!lenient.is_clean());
    assert_eq!(strict.segments, lenient.segments);
    assert_eq!(kinds(&strict), kinds(&lenient));
    assert!(
        lenient
            .findings
            .iter()
            .all(|f| f.severity == Severity::Warning)
    );
    assert!(
        strict
            .findings
            .iter()
            .all(|f| f.severity == Severity::Error)
    );
    let lines: Vec<_> = strict.findings.iter().map(|f| f.line).collect();
    assert_eq!(lines, [1, 2, 2, 3]);
}

#[test]
fn empty_output_is_unmarked() {
    let parsed = parse("", Mode::Strict);
    assert!(parsed.segments.is_empty());
    assert_eq!(kinds(&parsed), [FindingKind::UnmarkedOutput]);
}

#[test]
fn crlf_content_is_byte_exact() {
    let text = "=== AOP-FINAL | agent=a ===\r\nline one\r\nline two\r\n=== END-AOP-FINAL ===\r\n";
    let parsed = strict_ok(text);
    assert_eq!(only_block(&parsed).content, "line one\r\nline two");
}

#[test]
fn context_that_is_not_json_stays_text() {
    let parsed = strict_ok("=== AOP-CONTEXT ===\nnot json\n=== END-AOP-CONTEXT ===");
    let block = only_block(&parsed);
    assert_eq!(block.json, None);
    assert_eq!(block.content, "not json");
}

#[test]
fn inline_markers_and_lookalikes_are_text() {
    for text in [
        "see `=== AOP-FINAL ===` here",
        "==== AOP-FINAL ====",
        "=== AOP-FINAL",
        "======",
        "=== FINAL ===",
    ] {
        let parsed = parse(text, Mode::Lenient);
        assert_eq!(parsed.blocks().count(), 0, "{text}");
    }
}

#[test]
fn parsed_serialises_for_front_ends() {
    let parsed = parse(
        "=== AOP-FINAL | agent=a ===\nx\n=== END-AOP-FINAL ===",
        Mode::Strict,
    );
    let json = serde_json::to_string(&parsed).unwrap();
    let back: Parsed = serde_json::from_str(&json).unwrap();
    assert_eq!(back, parsed);
}

// --- Streams ---

fn stream(attrs: &str, body: &str) -> String {
    format!("=== AOP-STREAM{attrs} ===\n{body}\n=== END-AOP-STREAM ===\n")
}

#[test]
fn streams_join_consecutive_chunks_and_complete_on_other_output() {
    let a1 = parse(&stream("", "one"), Mode::Lenient);
    let b1 = parse(&stream("", "other agent"), Mode::Lenient);
    let a2 = parse(
        &format!("{}\n{}", stream("", "two"), stream("", "three")),
        Mode::Lenient,
    );
    let a3 = parse(
        "=== AOP-FINAL | agent=a ===\ndone\n=== END-AOP-FINAL ===",
        Mode::Lenient,
    );
    let items = [("a", &a1), ("b", &b1), ("a", &a2), ("a", &a3)];
    let streams = group_streams(items);
    assert_eq!(streams.len(), 2);
    assert_eq!(streams[0].agent, "a");
    assert_eq!(streams[0].chunks, ["one", "two", "three"]);
    assert!(streams[0].complete);
    assert_eq!(streams[0].text(), "one\ntwo\nthree");
    assert_eq!(streams[1].agent, "b");
    assert!(!streams[1].complete, "b is still streaming");
}

#[test]
fn streams_complete_on_explicit_last_chunk() {
    for attrs in [
        " | chunk=2 | total=2",
        " | chunk=2/2",
        " | final=true",
        " | last=yes",
    ] {
        let first = parse(&stream(" | chunk=1 | total=2", "x"), Mode::Lenient);
        let last = parse(&stream(attrs, "y"), Mode::Lenient);
        let next = parse(&stream("", "z"), Mode::Lenient);
        let streams = group_streams([("a", &first), ("a", &last), ("a", &next)]);
        assert_eq!(streams.len(), 2, "{attrs}");
        assert!(streams[0].complete);
        assert_eq!(streams[0].chunks, ["x", "y"]);
        assert!(!streams[1].complete);
    }
}

#[test]
fn chunk_attributes_that_are_not_last() {
    for attrs in [
        " | chunk=1 | total=2",
        " | chunk=x/2",
        " | final=no",
        " | chunk=0/0",
    ] {
        let parsed = parse(&stream(attrs, "x"), Mode::Lenient);
        assert!(!only_block(&parsed).is_last_chunk(), "{attrs}");
    }
}

// --- Properties ---

fn is_marker_line(line: &str) -> bool {
    marker(line).is_some()
}

proptest! {
    #[test]
    fn parse_never_panics(text in any::<String>()) {
        for mode in [Mode::Lenient, Mode::Strict] {
            let parsed = parse(&text, mode);
            prop_assert!(parsed.findings.windows(2).all(|w| w[0].line <= w[1].line));
        }
    }

    #[test]
    fn parse_never_panics_on_marker_soup(pieces in prop::collection::vec(prop_oneof![
        Just("=== AOP-FINAL | agent=é ===".to_string()),
        Just("=== END-AOP-FINAL ===".to_string()),
        Just("=== AOP-STREAM | chunk=1/1 ===".to_string()),
        Just("=== END-AOP-STREAM ===".to_string()),
        Just("=== AOP-CONTEXT ===".to_string()),
        Just("=== END-AOP-CONTEXT ===".to_string()),
        Just("=== AOP-ÜBER | ß ===".to_string()),
        Just("\r".to_string()),
        Just("{\"k\": 1}".to_string()),
        "\\PC{0,8}",
    ], 0..24)) {
        let text = pieces.join("\n");
        let parsed = parse(&text, Mode::Strict);
        let streams = group_streams([("a", &parsed), ("a", &parsed)]);
        prop_assert!(streams.iter().all(|s| !s.chunks.is_empty()));
    }

    #[test]
    fn final_content_round_trips(
        content in "(\\PC|\n|\r\n|\t){0,200}",
        agent in "[a-z][a-z -]{0,12}[a-z]",
        crlf in any::<bool>(),
    ) {
        prop_assume!(!content.split('\n').any(is_marker_line));
        let nl = if crlf { "\r\n" } else { "\n" };
        let text = format!("=== AOP-FINAL | agent={agent} ==={nl}{content}{nl}=== END-AOP-FINAL ==={nl}");
        let parsed = parse(&text, Mode::Strict);
        prop_assert!(parsed.is_clean(), "{:?}", parsed.findings);
        let block = only_block(&parsed);
        prop_assert_eq!(&block.content, &content);
        prop_assert_eq!(block.attr("agent"), Some(agent.as_str()));
    }
}

#[test]
fn a_run_note_sums_up_problems_only_when_the_answer_uses_aop() {
    assert_eq!(run_note("a", "plain answer, no markers"), None);
    // Text around a well-formed block is fine.
    assert_eq!(
        run_note(
            "a",
            "Here it is:\n=== AOP-FINAL | agent=a ===\nok\n=== END-AOP-FINAL ===\n@user done\n"
        ),
        None
    );
    assert_eq!(
        run_note(
            "a",
            "=== AOP-FINAL | agent=a ===\nok\n=== END-AOP-FINAL ===\n"
        ),
        None
    );
    let note = run_note("a", "=== AOP-FINAL | agent=a ===\nnever closed\n").unwrap();
    assert!(
        note.starts_with("a's answer has 1 AOP problem (accepted leniently"),
        "{note}"
    );
    assert!(note.contains("line 1: "), "{note}");
    let many = "=== END-AOP-FINAL ===\n".repeat(5);
    let note = run_note("a", &many).unwrap();
    assert!(note.contains("has 5 AOP problems"), "{note}");
    assert!(note.ends_with("and 2 more"), "{note}");
}
