use super::*;
use std::sync::mpsc;

/// The batches a sink was handed, in order.
type Calls = Arc<Mutex<Vec<Vec<u32>>>>;

/// A sink whose calls (the batches it saw) are recorded, and which waits
/// on `gate` before each call returns when one is given.
fn recording(
    gate: Option<mpsc::Receiver<()>>,
) -> (
    Calls,
    impl FnMut(&mut Vec<u32>) -> Result<(), String> + Send + 'static,
) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&calls);
    let sink = move |batch: &mut Vec<u32>| {
        seen.lock().unwrap().push(batch.clone());
        if let Some(gate) = &gate {
            let _ = gate.recv();
        }
        Ok(())
    };
    (calls, sink)
}

#[test]
fn items_queued_while_the_sink_works_are_one_batch() {
    let (open, gate) = mpsc::channel();
    let (calls, sink) = recording(Some(gate));
    let writer = BatchWriter::start("test-batch", Options::default(), sink).unwrap();
    let first = writer.submit(0);
    // Wait until the sink holds the first item, then queue 100 more.
    while calls.lock().unwrap().is_empty() {
        std::thread::yield_now();
    }
    let tickets: Vec<_> = (1..=100).map(|i| writer.submit(i)).collect();
    open.send(()).unwrap();
    first.wait().unwrap();
    open.send(()).unwrap();
    for t in &tickets {
        t.wait().unwrap();
    }
    assert_eq!(
        *calls.lock().unwrap(),
        vec![vec![0], (1..=100).collect::<Vec<_>>()]
    );
}

#[test]
fn items_reach_the_sink_in_order_and_dropping_writes_what_is_queued() {
    let (calls, sink) = recording(None);
    let writer = BatchWriter::start(
        "test-order",
        Options {
            capacity: Some(7),
            ..Options::default()
        },
        sink,
    )
    .unwrap();
    for i in 0..1000 {
        writer.submit(i);
    }
    drop(writer);
    let written: Vec<u32> = calls.lock().unwrap().concat();
    assert_eq!(written, (0..1000).collect::<Vec<_>>());
    assert!(calls.lock().unwrap().iter().all(|b| b.len() <= 7));
}

#[test]
fn gathering_makes_a_burst_one_batch() {
    let (calls, sink) = recording(None);
    let writer = BatchWriter::start(
        "test-gather",
        Options {
            gather: Duration::from_millis(200),
            capacity: None,
        },
        sink,
    )
    .unwrap();
    for i in 0..10 {
        writer.submit(i);
    }
    writer.flush().wait().unwrap();
    assert_eq!(*calls.lock().unwrap(), vec![(0..10).collect::<Vec<_>>()]);
}

#[test]
fn closing_does_not_wait_for_the_gathering() {
    let (calls, sink) = recording(None);
    let writer = BatchWriter::start(
        "test-close",
        Options {
            gather: Duration::from_secs(60),
            capacity: None,
        },
        sink,
    )
    .unwrap();
    let ticket = writer.submit(1);
    let started = Instant::now();
    drop(writer);
    assert!(started.elapsed() < Duration::from_secs(30));
    ticket.wait().unwrap();
    assert_eq!(*calls.lock().unwrap(), vec![vec![1]]);
}

#[test]
fn an_error_reaches_every_waiter_of_its_batch_and_only_them() {
    let (open, gate) = mpsc::channel::<()>();
    let (took, taken) = mpsc::channel::<()>();
    let mut call = 0;
    let writer = BatchWriter::start(
        "test-error",
        Options::default(),
        move |batch: &mut Vec<u32>| {
            call += 1;
            let _ = took.send(());
            let _ = gate.recv();
            match call {
                2 => Err(format!("disk full writing {batch:?}")),
                _ => Ok(()),
            }
        },
    )
    .unwrap();
    let first = writer.submit(0);
    // The first batch is in the sink: these three are the second batch.
    taken.recv().unwrap();
    let failing: Vec<_> = (1..=3).map(|i| writer.submit(i)).collect();
    open.send(()).unwrap();
    first.wait().unwrap();
    open.send(()).unwrap();
    for t in &failing {
        assert_eq!(
            t.wait(),
            Err(BatchError::Sink("disk full writing [1, 2, 3]".into()))
        );
    }
    let after = writer.submit(4);
    open.send(()).unwrap();
    after.wait().unwrap();
    assert_eq!(writer.flush().wait(), Ok(()));
}

#[test]
fn a_sink_that_panics_answers_its_batch_and_everything_after() {
    let (open, gate) = mpsc::channel::<()>();
    let (took, taken) = mpsc::channel::<()>();
    let writer: BatchWriter<u32, String> =
        BatchWriter::start("test-panic", Options::default(), move |batch| {
            let _ = took.send(());
            let _ = gate.recv();
            if batch.contains(&0) {
                panic!("the sink broke");
            }
            Ok(())
        })
        .unwrap();
    let first = writer.submit(0);
    taken.recv().unwrap();
    let queued = writer.submit(1);
    open.send(()).unwrap();
    assert_eq!(first.wait(), Err(BatchError::Panicked("test-panic".into())));
    assert_eq!(queued.wait(), Err(BatchError::Stopped("test-panic".into())));
    assert_eq!(
        writer.submit(2).wait(),
        Err(BatchError::Stopped("test-panic".into()))
    );
    assert_eq!(
        writer.flush().wait(),
        Err(BatchError::Stopped("test-panic".into()))
    );
    drop(writer);
}

#[test]
fn a_full_queue_of_a_stopped_writer_never_blocks_a_submitter() {
    let writer: BatchWriter<u32, String> = BatchWriter::start(
        "test-full",
        Options {
            capacity: Some(1),
            ..Options::default()
        },
        |_| panic!("always"),
    )
    .unwrap();
    for i in 0..10 {
        // Each either fails or is refused at once; none hangs.
        assert!(writer.submit(i).wait().is_err());
    }
}

#[test]
fn a_ticket_answered_inline_needs_no_thread() {
    let t: Ticket<String> = Ticket::answered(Err(BatchError::Sink("no".into())));
    assert_eq!(t.wait(), Err(BatchError::Sink("no".into())));
    assert_eq!(t.wait_timeout(Duration::ZERO), Some(t.wait()));
}
