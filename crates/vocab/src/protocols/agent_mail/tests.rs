use super::*;
use proptest::prelude::*;

fn ok(text: &str) -> MailRecord {
    let record = parse(text, Mode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(record, parse(text, Mode::Lenient).unwrap());
    record
}

fn s(text: &str) -> Option<String> {
    Some(text.to_string())
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| i.to_string()).collect()
}

const OFFERING: &str = "Subject: [ol-527.1] OFFERING_READY\n\nBody:\nBead: ol-527.1\nStatus: DONE\n\n## Changes\n- Commit: abc123def\n- Files: src/auth.rs, src/jwt.rs\n\n## Self-Validation\n- Tests: PASS\n- Lint: PASS\n- Build: PASS\n\n## Summary\nAdded JWT middleware.\n\n### Notes\nRefresh tokens rotate.\n";

#[test]
fn table_of_full_messages() {
    let completion = Completion {
        status: s("DONE"),
        commit: s("abc123def"),
        files: v(&["src/auth.rs", "src/jwt.rs"]),
        validation: Validation {
            tests: Some(true),
            lint: Some(true),
            build: Some(true),
        },
        summary: s("Added JWT middleware.\n\n### Notes\nRefresh tokens rotate."),
    };
    let cases: Vec<(String, &str, MailContent)> = vec![
            (
                "[ol-1] BEAD_ACCEPTED\nAccepted bead: ol-1\nTitle: Add login\nStarting implementation at: 2025-01-18T10:00:00Z".into(),
                "ol-1",
                MailContent::BeadAccepted { title: s("Add login"), started_at: s("2025-01-18T10:00:00Z") },
            ),
            (
                "PROGRESS\nBead: ol-2\nStep: Step 4 - implementing auth\nStatus: writing tests\nContext usage: 45%\nFiles touched: a.rs, b/c.rs".into(),
                "ol-2",
                MailContent::Progress {
                    step: s("Step 4 - implementing auth"),
                    status: s("writing tests"),
                    context_usage: Some(45),
                    files_touched: v(&["a.rs", "b/c.rs"]),
                },
            ),
            (
                "Subject: HELP_REQUEST\nBody:\nBead: ol-3\nIssue Type: SPEC_UNCLEAR\n\n## Problem\nTwo specs disagree.\n### Detail\nOne says 5, one says 7.\n\n## What I Tried\nReading both.\n\n## Files Touched\n- path/one.rs\n- path/two.rs\n\n## Question\nWhich wins?".into(),
                "ol-3",
                MailContent::HelpRequest {
                    issue_type: Some(IssueType::SpecUnclear),
                    problem: s("Two specs disagree.\n### Detail\nOne says 5, one says 7."),
                    what_tried: s("Reading both."),
                    files_touched: v(&["path/one.rs", "path/two.rs"]),
                    question: s("Which wins?"),
                },
            ),
            (
                "ol-4: HELP_RESPONSE\nBead: ol-4\nUse the newer spec.\n\nIt supersedes the old one.".into(),
                "ol-4",
                MailContent::HelpResponse { guidance: s("Use the newer spec.\n\nIt supersedes the old one.") },
            ),
            (OFFERING.into(), "ol-527.1", MailContent::OfferingReady(completion.clone())),
            (OFFERING.replace("OFFERING_READY", "DONE"), "ol-527.1", MailContent::Done(completion)),
            (
                "[ol-5] FAILED\nBead: ol-5\nStatus: FAILED\n\n## Failure\nType: TESTS_FAIL\nReason: flaky integration test\nInternal Attempts: 3\n\n## Partial Progress\n- Commit: def456\n- Files: x.rs\n\n## Recommendation\nStabilise the fixture.".into(),
                "ol-5",
                MailContent::Failed {
                    status: s("FAILED"),
                    failure_type: Some(FailureType::TestsFail),
                    reason: s("flaky integration test"),
                    internal_attempts: Some(3),
                    partial_commit: s("def456"),
                    files: v(&["x.rs"]),
                    recommendation: s("Stabilise the fixture."),
                },
            ),
            (
                "CHECKPOINT\nBead: ol-6\nReason: CONTEXT_HIGH\n\n## Progress\n- Commit: 777aaa\n- Description: parser done, tests remain\n- Context usage: 85%\n\n## Next Steps for Successor\nWrite the tests.".into(),
                "ol-6",
                MailContent::Checkpoint {
                    reason: Some(CheckpointReason::ContextHigh),
                    commit: s("777aaa"),
                    description: s("parser done, tests remain"),
                    context_usage: Some(85),
                    next_steps: s("Write the tests."),
                },
            ),
            (
                "SPAWN_REQUEST\nIssue: ol-7\nResume: true\nCheckpoint: 777aaa\nOrchestrator: crank-1".into(),
                "ol-7",
                MailContent::SpawnRequest { resume: Some(true), checkpoint: s("777aaa"), orchestrator: s("crank-1") },
            ),
            (
                "SPAWN_ACK\nIssue: ol-7\nStatus: spawned\nSession: demigod-7".into(),
                "ol-7",
                MailContent::SpawnAck { status: Some(SpawnStatus::Spawned), session: s("demigod-7") },
            ),
        ];
    for (text, bead, content) in cases {
        let record = ok(&text);
        assert_eq!(record.content, content, "{text}");
        assert_eq!(record.bead_id.as_deref(), Some(bead), "{text}");
        assert_eq!(record.thread_id, record.bead_id);
        assert!(record.problems.is_empty());
    }
}

#[test]
fn every_type_is_covered_and_ack_table_matches_seed() {
    let acked: Vec<_> = MessageType::ALL
        .iter()
        .filter(|t| t.ack_required())
        .collect();
    assert_eq!(
        acked,
        [
            &MessageType::HelpRequest,
            &MessageType::OfferingReady,
            &MessageType::SpawnRequest
        ]
    );
    assert_eq!(MessageType::ALL.len(), 10);
    assert!(ok(OFFERING).ack_required);
}

#[test]
fn bead_id_prefers_body_then_subject() {
    let record = ok("[ol-9] PROGRESS\nBead: ol-8\nStep: a\nStatus: b");
    assert_eq!(record.bead_id.as_deref(), Some("ol-8"));
    let record = ok("[ol-9] PROGRESS\nStep: a\nStatus: b");
    assert_eq!(record.bead_id.as_deref(), Some("ol-9"));
    let record = ok("ol-527.1: PROGRESS\nStep: a\nStatus: b");
    assert_eq!(record.bead_id.as_deref(), Some("ol-527.1"));
}

// --- Misparses of the reference parser ---

#[test]
fn type_is_matched_as_a_word() {
    for subject in [
        "ABANDONED",
        "[ol-1] UNDONE",
        "HELP_REQUEST_DRAFT",
        "almost done",
        "PROGRESSIVE",
    ] {
        let record = parse(subject, Mode::Lenient).unwrap();
        assert_eq!(record.kind(), None, "{subject}");
        assert!(matches!(
            record.problems[0],
            MailProblem::UnknownType { .. }
        ));
    }
    let record = parse(
        "[ol-1] Status: DONE (tests green)\nBead: ol-1",
        Mode::Lenient,
    )
    .unwrap();
    assert_eq!(record.kind(), Some(MessageType::Done));
}

#[test]
fn reply_to_help_request_is_a_response_in_its_thread() {
    let request = ok("[ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?");
    let response = ok("Re: [ol-3] HELP_REQUEST\nTry the other API.");
    assert_eq!(response.kind(), Some(MessageType::HelpResponse));
    assert_eq!(response.in_reply_to, Some(MessageType::HelpRequest));
    assert_eq!(response.thread_id.as_deref(), Some("ol-3"));
    assert_eq!(
        response.content,
        MailContent::HelpResponse {
            guidance: s("Try the other API.")
        }
    );
    assert_eq!(pending(std::slice::from_ref(&request)).len(), 1);
    assert!(pending(&[request, response]).is_empty());
}

#[test]
fn reply_to_other_types_is_not_that_type() {
    let record = parse("RE: re: [ol-1] DONE\nthanks", Mode::Lenient).unwrap();
    assert_eq!(record.kind(), None);
    assert_eq!(record.in_reply_to, Some(MessageType::Done));
    assert!(completions(&[record]).is_empty());
}

#[test]
fn labels_are_read_only_at_line_start() {
    let text = "CHECKPOINT\nBead: ol-6\nNote: the Reason: field below matters\nReason: MANUAL\n## Progress\n- Commit: abc\nThe Commit: xyz is older";
    let record = ok(text);
    let MailContent::Checkpoint { reason, commit, .. } = record.content else {
        panic!("not a checkpoint");
    };
    assert_eq!(reason, Some(CheckpointReason::Manual));
    assert_eq!(commit, s("abc"));
    let record = ok("PROGRESS\nSubBead: wrong\nBead: right\nStep: a\nStatus: b");
    assert_eq!(record.bead_id, s("right"));
}

#[test]
fn markdown_emphasis_labels() {
    let record = ok("PROGRESS\n**Bead:** ol-1\n**Step**: s\n- **Status:** ok");
    assert_eq!(record.bead_id, s("ol-1"));
    assert!(matches!(
        record.content,
        MailContent::Progress {
            step: Some(_),
            status: Some(_),
            ..
        }
    ));
}

#[test]
fn subsections_stay_inside_their_section() {
    let record = ok(OFFERING);
    let summary = record.completion().unwrap().summary.clone().unwrap();
    assert!(summary.ends_with("### Notes\nRefresh tokens rotate."));
}

#[test]
fn crlf_bodies() {
    let record = ok(&OFFERING.replace('\n', "\r\n"));
    assert_eq!(record.completion().unwrap().commit, s("abc123def"));
    assert_eq!(record.bead_id, s("ol-527.1"));
}

// --- Lenient vs strict ---

#[test]
fn strict_rejects_missing_required_fields() {
    let err = parse(
        "[ol-1] FAILED\nStatus: FAILED\n## Failure\nType: EXPLODED",
        Mode::Strict,
    )
    .unwrap_err();
    assert_eq!(
        err.problems,
        [
            MailProblem::InvalidField {
                field: "Type".into(),
                value: "EXPLODED".into(),
                expected: "one of TESTS_FAIL, BUILD_FAIL, SPEC_IMPOSSIBLE, CONTEXT_HIGH, ERROR"
                    .into()
            },
            MailProblem::MissingField {
                message_type: MessageType::Failed,
                field: "Reason".into()
            },
        ]
    );
    assert!(err.to_string().contains("EXPLODED"));
}

#[test]
fn lenient_keeps_partial_parse_with_warnings() {
    let record = parse("PROGRESS\nStep: one\nContext usage: lots", Mode::Lenient).unwrap();
    assert_eq!(record.kind(), Some(MessageType::Progress));
    assert_eq!(record.bead_id, None);
    let MailContent::Progress {
        step,
        context_usage,
        ..
    } = &record.content
    else {
        panic!("not progress");
    };
    assert_eq!((step.as_deref(), *context_usage), (Some("one"), None));
    assert_eq!(record.problems.len(), 3, "{:?}", record.problems);
    let strict = parse("PROGRESS\nStep: one\nContext usage: lots", Mode::Strict).unwrap_err();
    assert_eq!(strict.problems, record.problems);
}

#[test]
fn check_skips_leading_mentions_and_lists_the_modes_problems() {
    let good = "@lead @qa [ol-3] PROGRESS\nBead: ol-3\nStep: 2/5 parser\nStatus: on track";
    let c = check(good, Mode::Strict);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.record.kind(), Some(MessageType::Progress));
    assert_eq!(c.record.bead_id, s("ol-3"));
    // Misplaced type word: strict finds it, lenient reads it.
    let text = "@lead Update: PROGRESS\nStep: a\nStatus: b\nBead: c";
    assert!(check(text, Mode::Lenient).problems.is_empty());
    let strict = check(text, Mode::Strict);
    assert!(!strict.problems.is_empty());
    assert_eq!(
        strict.problems,
        parse(&text[6..], Mode::Strict).unwrap_err().problems
    );
}

#[test]
fn unknown_type_is_error_in_strict_mode() {
    let err = parse("STATUS_UPDATE\nBead: x", Mode::Strict).unwrap_err();
    assert!(matches!(err.problems[0], MailProblem::UnknownType { .. }));
    let record = parse("STATUS_UPDATE\nBead: x", Mode::Lenient).unwrap();
    assert_eq!(record.content, MailContent::Unknown);
    assert_eq!(record.bead_id, s("x"));
}

#[test]
fn strict_requires_type_first_and_labels_in_place() {
    let text = "Update: PROGRESS\nStep: a\nStatus: b\nBead: c";
    assert!(parse(text, Mode::Strict).is_err());
    assert_eq!(
        parse(text, Mode::Lenient).unwrap().kind(),
        Some(MessageType::Progress)
    );
    let misplaced = "[ol-1] FAILED\nType: BUILD_FAIL\nReason: linker\n## Failure\n";
    assert!(parse(misplaced, Mode::Strict).is_err());
    let lenient = parse(misplaced, Mode::Lenient).unwrap();
    assert!(lenient.problems.is_empty());
    assert!(matches!(
        lenient.content,
        MailContent::Failed {
            failure_type: Some(FailureType::BuildFail),
            ..
        }
    ));
}

#[test]
fn conditional_requirements() {
    assert!(
        parse(
            "SPAWN_REQUEST\nIssue: a\nResume: false\nOrchestrator: o",
            Mode::Strict
        )
        .is_ok()
    );
    assert!(
        parse(
            "SPAWN_REQUEST\nIssue: a\nResume: true\nOrchestrator: o",
            Mode::Strict
        )
        .is_err()
    );
    assert!(parse("SPAWN_ACK\nIssue: a\nStatus: failed", Mode::Strict).is_ok());
    assert!(parse("SPAWN_ACK\nIssue: a\nStatus: spawned", Mode::Strict).is_err());
    assert!(parse("Re: HELP_REQUEST\n\n", Mode::Strict).is_err());
}

#[test]
fn field_value_parsers() {
    assert_eq!(parse_percent("~45.4 %"), Some(45));
    assert_eq!(parse_percent("101%"), None);
    assert_eq!(parse_percent("NaN"), None);
    assert_eq!(parse_pass("PASS (12 tests)"), Some(true));
    assert_eq!(parse_pass("fail"), Some(false));
    assert_eq!(parse_pass("maybe"), None);
    assert_eq!(parse_list("- a\n* b, c\n\n-"), v(&["a", "b", "c"]));
    assert_eq!(heading_level("### x"), Some(3));
    assert_eq!(heading_level("#hashtag"), None);
}

// --- Filters ---

#[test]
fn filters() {
    let failing = OFFERING
        .replace("- Tests: PASS", "- Tests: FAIL")
        .replace("ol-527.1", "ol-2");
    let records: Vec<MailRecord> = [
        OFFERING.to_string(),
        failing,
        "[ol-3] FAILED\n## Failure\nType: ERROR\nReason: r".into(),
        "[ol-3] CHECKPOINT\nReason: TIMEOUT\n## Progress\n- Commit: c".into(),
        "[ol-3] PROGRESS\nStep: a\nStatus: b".into(),
        "SPAWN_REQUEST\nIssue: ol-4\nResume: false\nOrchestrator: o".into(),
    ]
    .iter()
    .map(|t| ok(t))
    .collect();
    assert_eq!(completions(&records).len(), 4);
    let wins = successes(&records);
    assert_eq!(wins.len(), 1);
    assert_eq!(wins[0].bead_id, s("ol-527.1"));
    assert_eq!(by_bead(&records, "ol-3").len(), 3);
    assert_eq!(by_type(&records, MessageType::Checkpoint).len(), 1);
    assert_eq!(pending(&records).len(), 3);
    let mut acked = records.clone();
    acked[0].acknowledged = true;
    assert_eq!(pending(&acked).len(), 2);
}

#[test]
fn records_serialise_for_front_ends() {
    let record = ok(OFFERING);
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["content"]["type"], "OFFERING_READY");
    assert_eq!(json["content"]["validation"]["tests"], true);
    let back: MailRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, record);
}

proptest! {
    #[test]
    fn never_panics(text in any::<String>()) {
        for mode in [Mode::Lenient, Mode::Strict] {
            let _ = parse(&text, mode);
        }
    }

    #[test]
    fn never_panics_on_protocol_soup(lines in prop::collection::vec(prop_oneof![
        "(Subject: )?(Re: )?(\\[[a-zé.0-9-]{0,6}\\] )?(BEAD_ACCEPTED|PROGRESS|HELP_REQUEST|HELP_RESPONSE|OFFERING_READY|DONE|FAILED|CHECKPOINT|SPAWN_REQUEST|SPAWN_ACK|ÜBER)",
        "(- )?(\\*\\*)?(Bead|Status|Step|Type|Reason|Commit|Files|Tests|Context usage|Resume|Issue|Session|Issue Type|Internal Attempts|Bodÿ):(\\*\\*)? ?[A-Za-z0-9é%~ ,.]{0,10}",
        "#{1,3} (Changes|Self-Validation|Failure|Progress|Summary|Question|Problem|Ünïcode)",
        "\\PC{0,12}",
    ], 0..16)) {
        let text = lines.join("\n");
        for mode in [Mode::Lenient, Mode::Strict] {
            if let Ok(record) = parse(&text, mode) {
                let records = [record];
                let _ = (completions(&records), successes(&records), pending(&records));
            }
        }
    }
}
