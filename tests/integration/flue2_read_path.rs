//! The 2.x read path's shortcuts against the plain reads they replace, on a generated journal
//! (the `flue2` profile, tool-heavy streams and a whale): every stream read from its text
//! (`fold_stream`, records never built as JSON trees, most kept as a digest) folds to the same
//! conversations as its records parsed as trees and folded whole (`parse_batch`, `fold_owned`),
//! and `Streams::inspect_each` (one stream held at a time) gives every row the verdict,
//! disposition and plan `Streams::load` + `inspect` give it.

use turnscope_core::flue2::{parse_batch, InstanceState};
use turnscope_engine::flue2::{fold_stream, item_json, Flue2Options, Streams};
use turnscope_engine::flue2_cost::{attempts_and_memos, AttemptsAndMemos};
use turnscope_engine::flue2_fold::{
    fold_stream_in_chunks, fold_streams_in_chunks, FoldedStream, ReaderParses,
};
use turnscope_store::StoreError;
use turnscope_store::{BatchChunk, ChunkItem, Flue2SqliteReader};

const NOW_MS: i64 = 1_780_000_000_000;

/// A batch as compared: its row and text.
type Row = (i64, Option<String>, Option<String>, String, usize);

/// Every stream read into chunks (one per batch, the chunks used again; and one for all) gives
/// its batches as plain SQL reads them (a spilled batch's chunks put back together), each
/// stream's end after its last; `each_stream_batch` gives them too. Some batches are spilled
/// here as the runtime spills them (CSS:5765, 5817).
#[test]
fn streams_read_into_chunks_are_their_batches() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "INSERT INTO flue_conversation_stream_batch_chunks (path, seq, chunk_index, chunk_count, data)
           SELECT path, seq, 0, 2, substr(data, 1, 10) FROM flue_conversation_stream_batches WHERE seq % 7 = 3;
         INSERT INTO flue_conversation_stream_batch_chunks (path, seq, chunk_index, chunk_count, data)
           SELECT path, seq, 1, 2, substr(data, 11) FROM flue_conversation_stream_batches WHERE seq % 7 = 3;
         UPDATE flue_conversation_stream_batches SET data = '{\"$flueChunkCount\":2}' WHERE seq % 7 = 3;",
    )
    .unwrap();
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let streams = reader.streams().unwrap();
    let mut want: Vec<(usize, Row)> = Vec::new();
    for (i, s) in streams.iter().enumerate() {
        let mut st = conn
            .prepare(
                "SELECT seq, submission_id, attempt_id, data, (SELECT group_concat(data, '') FROM \
                 (SELECT data FROM flue_conversation_stream_batch_chunks c WHERE c.path = b.path \
                 AND c.seq = b.seq ORDER BY chunk_index)), (SELECT count(*) FROM \
                 flue_conversation_stream_batch_chunks c WHERE c.path = b.path AND c.seq = b.seq) \
                 FROM flue_conversation_stream_batches b WHERE path = ?1 ORDER BY seq",
            )
            .unwrap();
        let rows = st
            .query_map([&s.path], |r| {
                let chunks: usize = r.get(5)?;
                let data: String = if chunks > 0 { r.get(4)? } else { r.get(3)? };
                Ok((i, (r.get(0)?, r.get(1)?, r.get(2)?, data, chunks)))
            })
            .unwrap();
        want.extend(rows.map(Result::unwrap));
    }
    assert!(want.len() > 1000, "{} batches", want.len());
    let spilled = want.iter().filter(|(_, r)| r.4 == 2).count();
    assert!(spilled > 10, "{spilled} spilled");
    let each: Vec<(usize, Row)> = streams
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let batches = reader.stream_batches(&s.path).unwrap();
            batches.into_iter().map(move |b| {
                (
                    i,
                    (b.seq, b.submission_id, b.attempt_id, b.data, b.chunk_count),
                )
            })
        })
        .collect();
    assert_eq!(each, want, "each_stream_batch");
    // Batches read by their keys: a spilled one whole, in `seq` order whatever the order asked,
    // once each, a seq the stream lacks skipped.
    for (i, s) in streams.iter().enumerate() {
        let of_stream: Vec<&Row> = want
            .iter()
            .filter(|(k, _)| *k == i)
            .map(|(_, r)| r)
            .collect();
        let picked: Vec<Row> = of_stream
            .iter()
            .filter(|r| r.0 % 5 == 3 || r.4 == 2)
            .map(|r| (*r).clone())
            .collect();
        let mut asked: Vec<i64> = picked.iter().rev().map(|r| r.0).collect();
        asked.extend(picked.first().map(|r| r.0));
        asked.push(-1);
        let mut got = Vec::new();
        reader
            .each_batch_at(&s.path, &asked, |b| {
                got.push((
                    b.seq,
                    b.submission_id.map(str::to_string),
                    b.attempt_id.map(str::to_string),
                    b.data.to_string(),
                    b.chunk_count,
                ));
                Ok(())
            })
            .unwrap();
        assert_eq!(got, picked, "each_batch_at on {}", s.path);
    }
    for hand_on_each in [true, false] {
        let mut got: Vec<(usize, Row)> = Vec::new();
        let mut ends = Vec::new();
        let mut take = |c: &BatchChunk| {
            for item in c.items() {
                match item {
                    ChunkItem::Batch(i, b) => got.push((
                        i,
                        (
                            b.seq,
                            b.submission_id.map(str::to_string),
                            b.attempt_id.map(str::to_string),
                            b.data.to_string(),
                            b.chunk_count,
                        ),
                    )),
                    ChunkItem::End(i) => ends.push((i, got.len())),
                }
            }
        };
        let mut chunk = BatchChunk::default();
        for (i, s) in streams.iter().enumerate() {
            reader
                .read_stream_into(&s.path, i, &mut chunk, |c| {
                    if hand_on_each {
                        assert_eq!(c.batch_count(), 1);
                        take(c);
                        c.clear();
                    }
                    Ok(())
                })
                .unwrap();
            chunk.end_stream(i);
            if hand_on_each {
                take(&chunk);
                chunk.clear();
            }
        }
        take(&chunk);
        assert_eq!(got, want, "handed on after each batch: {hand_on_each}");
        assert_eq!(ends.len(), streams.len());
        for (i, at) in ends {
            assert!(want[..at].iter().all(|(k, _)| *k <= i), "stream {i}'s end");
            assert!(want[at..].iter().all(|(k, _)| *k > i), "stream {i}'s end");
        }
    }
}

#[test]
fn flue2_read_path_folds_and_inspects_as_the_plain_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let reader = Flue2SqliteReader::open(&db).unwrap();

    let mut streams = 0;
    for s in reader.streams().unwrap() {
        let read = fold_stream(&reader, &s.path).unwrap();
        let records = reader
            .stream_batches(&s.path)
            .unwrap()
            .iter()
            .map(|b| (b.seq, parse_batch(&b.data).unwrap()))
            .collect::<Vec<_>>();
        let tree = InstanceState::fold_owned(records).unwrap();
        let read = read.state.unwrap();
        assert_eq!(read.conversations, tree.conversations, "{}", s.path);
        // One batch per chunk: parsed in parallel, applied on the applying thread, in order.
        let chunked = fold_stream_in_chunks(&reader, &s.path, 1, |_, _| {}).unwrap();
        assert_eq!(
            chunked.batches,
            reader.stream_batches(&s.path).unwrap().len(),
            "{}",
            s.path
        );
        let chunked = chunked.state.unwrap();
        assert_eq!(chunked.conversations, tree.conversations, "{}", s.path);
        streams += 1;
    }
    assert!(streams > 10, "{streams} streams");
    // Every stream in one pipeline, chunks spanning streams, at three chunk sizes: each stream's
    // fold is `fold_stream`'s, handed over in order.
    let paths: Vec<String> = reader
        .streams()
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    // The reading thread parsing chunks too (every one, to be sure it happens) changes nothing.
    every_pipeline(&reader, &paths, &[1, 64 << 10, usize::MAX], |k, f| {
        assert_same_fold(f, &fold_stream(&reader, &paths[k]).unwrap(), &paths[k]);
    });

    let options = Flue2Options::for_release("2.1.0", 200_000).unwrap();
    let rows = reader.submissions().unwrap();
    let joined = turnscope_core::flue2::joined_by_host(&rows);
    let j = |id: &str| joined.get(id).cloned().unwrap_or_default();
    let mut all = Streams::default();
    all.load(&reader, &rows).unwrap();
    let mut each =
        Streams::inspect_each(&reader, &rows, &options, |r| j(&r.submission_id), NOW_MS).unwrap();
    assert_eq!(each.len(), rows.len());
    // `show`'s attempts and step memos, seen as the fold reads (one read), are those of their own
    // read of the stream.
    let mut traced = 0;
    for r in &rows {
        let Some(k) = r.session() else { continue };
        let path = k.stream_path();
        let mut seen = AttemptsAndMemos::new(r);
        fold_stream_in_chunks(&reader, &path, 1, |b, recs| seen.observe(b, recs)).unwrap();
        let (attempts, memos) = seen.finish();
        let (want_attempts, want_memos) = attempts_and_memos(&reader, &path, r).unwrap();
        assert_eq!(attempts, want_attempts, "{}", r.submission_id);
        assert_eq!(memos, want_memos, "{}", r.submission_id);
        traced += attempts.len();
    }
    assert!(traced > 10, "{traced} attempts traced");

    let mut planned = 0;
    for r in &rows {
        let want = item_json(
            &all.inspect(r, &options, j(&r.submission_id), NOW_MS),
            NOW_MS,
        );
        let got = item_json(&each.remove(&r.submission_id).unwrap().attach(r), NOW_MS);
        assert_eq!(got, want, "{}", r.submission_id);
        planned += usize::from(want["plan"]["step"].is_number());
    }
    assert!(planned > 0, "no row's plan fires a step: nothing compared");
}

/// The parallel read keeps the whole-stream answer: a batch that does not parse wins over an
/// earlier record that does not fold, whichever chunk each is in, and a fold error alone is
/// reported with its stream; one chunk per batch and one chunk for all answer alike. A record
/// repeated as it was folds as the runtime folds it in the pipeline too, which reads without
/// digests and so must read that stream again.
#[test]
fn flue2_chunked_fold_reports_the_first_parse_error_over_a_fold_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let (path, seqs): (String, Vec<i64>) = {
        let reader = Flue2SqliteReader::open(&db).unwrap();
        let s = reader
            .streams()
            .unwrap()
            .into_iter()
            .max_by_key(|s| reader.stream_batches(&s.path).unwrap().len())
            .unwrap();
        let seqs = reader
            .stream_batches(&s.path)
            .unwrap()
            .iter()
            .map(|b| b.seq)
            .collect();
        (s.path, seqs)
    };
    assert!(seqs.len() > 20, "{} batches", seqs.len());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let data = |seq: i64| -> String {
        conn.query_row(
            "SELECT data FROM flue_conversation_stream_batches WHERE path = ?1 AND seq = ?2",
            rusqlite::params![path, seq],
            |r| r.get(0),
        )
        .unwrap()
    };
    let set = |seq: i64, data: &str| {
        conn.execute(
            "UPDATE flue_conversation_stream_batches SET data = ?1 WHERE path = ?2 AND seq = ?3",
            rusqlite::params![data, path, seq],
        )
        .unwrap();
    };
    let paths: Vec<String> = Flue2SqliteReader::open(&db)
        .unwrap()
        .streams()
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    let broken = paths.iter().position(|p| *p == path).unwrap();
    // The first batch's first record again, the same: the runtime accepts it and changes nothing.
    // The pipeline reads records without digests: it must read this stream again with them.
    let first: Vec<serde_json::Value> = serde_json::from_str(&data(seqs[0])).unwrap();
    let batch5 = data(seqs[5]);
    let mut repeated: Vec<serde_json::Value> = serde_json::from_str(&batch5).unwrap();
    repeated.insert(0, first[0].clone());
    set(seqs[5], &serde_json::to_string(&repeated).unwrap());
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let whole = fold_stream(&reader, &path).unwrap();
    let records = reader
        .stream_batches(&path)
        .unwrap()
        .iter()
        .map(|b| (b.seq, parse_batch(&b.data).unwrap()))
        .collect::<Vec<_>>();
    let tree = InstanceState::fold_owned(records).unwrap();
    match &whole.state {
        Ok(s) => assert_eq!(s.conversations, tree.conversations),
        Err(e) => panic!("{e}"),
    }
    // Observed, the stream read again is not observed again: each batch seen once.
    let row = reader
        .submissions()
        .unwrap()
        .into_iter()
        .find(|r| r.session().is_some_and(|k| k.stream_path() == path))
        .unwrap();
    let mut seen = AttemptsAndMemos::new(&row);
    let mut observed = 0;
    let chunked = fold_stream_in_chunks(&reader, &path, 1, |b, recs| {
        observed += 1;
        seen.observe(b, recs)
    })
    .unwrap();
    assert_same_fold(&chunked, &whole, &path);
    assert_eq!(observed, seqs.len());
    assert_eq!(
        seen.finish(),
        attempts_and_memos(&reader, &path, &row).unwrap()
    );
    every_pipeline(&reader, &paths, &[1, usize::MAX], |k, f| {
        if k == broken {
            assert_same_fold(f, &whole, &path);
        }
    });
    drop(reader);
    set(seqs[5], &batch5);

    // The first batch's first record again, changed: the same id, another text.
    let mut changed = first[0].clone();
    changed["timestamp"] = serde_json::json!("2020-01-01T00:00:00.000Z");
    set(seqs[5], &serde_json::to_string(&vec![changed]).unwrap());

    let answers = |reader: &Flue2SqliteReader| -> Vec<String> {
        [1, usize::MAX]
            .into_iter()
            .map(|chunk| {
                match fold_stream_in_chunks(reader, &path, chunk, |_, _| {})
                    .unwrap()
                    .state
                {
                    Ok(_) => "folds".to_string(),
                    Err(e) => e,
                }
            })
            .collect()
    };
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let fold_only = answers(&reader);
    assert!(
        fold_only[0].starts_with(&format!("{path}: ")),
        "{fold_only:?}"
    );
    assert_eq!(fold_only[0], fold_only[1]);
    drop(reader);

    set(seqs[15], "[{not json");
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let both = answers(&reader);
    assert!(
        both[0].starts_with(&format!("batch {} of {path}: ", seqs[15])),
        "{both:?}"
    );
    assert_eq!(both[0], both[1]);

    // In the one pipeline of every stream: the broken stream's answer, the others', in order; and
    // an error of the caller's stops it there.
    for parses in [ReaderParses::WhenBehind, ReaderParses::Always] {
        let mut answers = Vec::new();
        fold_streams_in_chunks(
            &reader,
            &paths,
            1,
            parses,
            |k, f| -> Result<(), StoreError> {
                assert_same_fold(&f, &fold_stream(&reader, &paths[k]).unwrap(), &paths[k]);
                answers.push(f.state.err());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(answers.len(), paths.len());
        assert_eq!(answers[broken].as_deref(), Some(both[0].as_str()));
        assert_eq!(answers.iter().filter(|a| a.is_some()).count(), 1);
    }
    let mut calls = 0;
    let stopped = fold_streams_in_chunks(&reader, &paths, 1, ReaderParses::Always, |k, _| {
        calls += 1;
        if k == 2 {
            return Err(StoreError::Missing("stop here".into()));
        }
        Ok(())
    });
    assert!(stopped.is_err());
    assert_eq!(calls, 3);
}

/// Every stream of `paths` through the one pipeline, in chunks of each size given, with the
/// reading thread parsing when behind and parsing every chunk: each fold handed over in order,
/// once, to `check`.
fn every_pipeline(
    reader: &Flue2SqliteReader,
    paths: &[String],
    chunks: &[usize],
    mut check: impl FnMut(usize, &FoldedStream),
) {
    for parses in [ReaderParses::WhenBehind, ReaderParses::Always] {
        for &chunk in chunks {
            let mut seen = 0;
            fold_streams_in_chunks(
                reader,
                paths,
                chunk,
                parses,
                |k, f| -> Result<(), StoreError> {
                    assert_eq!(k, seen, "in order");
                    seen += 1;
                    check(k, &f);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, paths.len(), "chunks of {chunk}, {parses:?}");
        }
    }
}

fn assert_same_fold(a: &FoldedStream, b: &FoldedStream, path: &str) {
    assert_eq!(a.batches, b.batches, "{path}");
    match (&a.state, &b.state) {
        (Ok(a), Ok(b)) => assert_eq!(a.conversations, b.conversations, "{path}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "{path}"),
        (a, b) => panic!("{path}: {:?} / {:?}", a.is_ok(), b.is_ok()),
    }
}
