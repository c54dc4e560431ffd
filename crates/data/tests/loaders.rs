//! Loader tests: embedded sets, every set in the data directory against DATA.md, and every bad
//! input.

use std::io::Write;
use std::path::PathBuf;

use bulwark_core::{Error, Features};
use bulwark_data::{
    BinaryTask, Format, binary_task, class_subset, load, load_path, parse_csv, parse_idx,
    parse_libsvm,
};

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn err_text(r: bulwark_core::Result<impl std::fmt::Debug>) -> String {
    r.expect_err("expected an error").to_string()
}

#[test]
fn embedded_sets_load_without_a_data_directory() {
    let dir = tempfile::tempdir().unwrap(); // an empty data directory: must fall back to embedded
    let (w, origin) = load("wdbc", Some(dir.path())).unwrap();
    assert_eq!(origin, bulwark_data::Origin::Embedded);
    assert_eq!((w.len(), w.n_features()), (569, 30));
    assert_eq!(
        w.class_counts().into_iter().collect::<Vec<_>>(),
        vec![("benign".into(), 357), ("malignant".into(), 212)]
    );
    let (s, _) = load("spambase", Some(dir.path())).unwrap();
    assert_eq!((s.len(), s.n_features()), (4601, 57));
    assert_eq!(s.class_counts()["spam"], 1813);
    let b = binary_task(&w, &BinaryTask::Natural).unwrap();
    assert_eq!(b.class_names(), ["benign", "malignant"]);
    assert_eq!(
        b.binary_labels()
            .unwrap()
            .iter()
            .filter(|s| **s == bulwark_core::Sign::Pos)
            .count(),
        212
    );
}

/// Shapes and class counts of every data set in the data directory (the repository's `data/`
/// unless `BULWARK_DATA` names another) against DATA.md.
#[test]
fn every_data_set_matches_data_md() {
    let dir = bulwark_data::data_dir(None).expect(
        "no data directory: the repository's data/ folder is missing and BULWARK_DATA is unset",
    );
    type Expected = (&'static str, usize, usize, &'static [(&'static str, usize)]);
    let table: &[Expected] = &[
        ("wdbc", 569, 30, &[("benign", 357), ("malignant", 212)]),
        ("spambase", 4601, 57, &[("nonspam", 2788), ("spam", 1813)]),
        ("ionosphere", 351, 34, &[("good", 225), ("bad", 126)]),
        ("pima", 768, 8, &[("neg", 500), ("pos", 268)]),
        (
            "splice",
            3186,
            180,
            &[("n", 1654), ("ei", 767), ("ie", 765)],
        ),
        (
            "wine",
            178,
            13,
            &[("class_0", 59), ("class_1", 71), ("class_2", 48)],
        ),
        ("usps", 11000, 256, &[("0", 1100), ("5", 1100), ("9", 1100)]),
        ("mnist10k", 10000, 784, &[]),
        ("spamassassin", 5913, 5239, &[("ham", 4110), ("spam", 1803)]),
    ];
    // (the mlbench sets have missing cells: `the_mlbench_sets_keep_their_missing_cells`)
    for &(name, rows, cols, counts) in table {
        let (d, origin) = load(name, Some(&dir)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            matches!(origin, bulwark_data::Origin::File(_)),
            "{name} should come from the data directory {}",
            dir.display()
        );
        assert_eq!((d.len(), d.n_features()), (rows, cols), "{name}");
        let cc = d.class_counts();
        for &(c, k) in counts {
            assert_eq!(cc.get(c), Some(&k), "{name}: class {c}");
        }
        if name == "usps" {
            assert_eq!(cc.len(), 10);
            assert!(cc.values().all(|&k| k == 1100));
        }
        if name == "mnist10k" {
            assert_eq!(cc.len(), 10);
            assert_eq!(cc.values().sum::<usize>(), 10000);
            // known MNIST test-set count of digit 1
            assert_eq!(cc["1"], 1135);
        }
    }
}

/// The three mlbench sets load with their missing cells as shipped (read as deleted features
/// under `MissingPolicy::Delete`, refused under the default policy), in the shapes, class
/// counts and missing-cell counts DATA.md states.
#[test]
fn the_mlbench_sets_keep_their_missing_cells() {
    use bulwark_data::{MissingPolicy, ReadOptions, load_with};
    let delete = ReadOptions {
        missing: MissingPolicy::Delete,
        ..ReadOptions::default()
    };
    type Expected = (
        &'static str,
        usize,
        usize,
        [(&'static str, usize); 2],
        usize,
        usize,
    );
    let table: [Expected; 3] = [
        (
            "housevotes84",
            435,
            16,
            [("democrat", 267), ("republican", 168)],
            392,
            203,
        ),
        (
            "breastcancer",
            699,
            9,
            [("benign", 458), ("malignant", 241)],
            16,
            16,
        ),
        ("pima2", 768, 8, [("neg", 500), ("pos", 268)], 652, 376),
    ];
    for (name, rows, cols, counts, cells, records) in table {
        let d = load_with(name, None, &delete)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .data;
        assert_eq!((d.len(), d.n_features()), (rows, cols), "{name}");
        for (c, k) in counts {
            assert_eq!(d.class_counts().get(c), Some(&k), "{name}: class {c}");
        }
        assert_eq!(
            (d.n_missing(), d.incomplete_records()),
            (cells, records),
            "{name}"
        );
        let e = load(name, None).unwrap_err().to_string();
        assert!(e.contains("missing value"), "{name}: {e}");
    }
    // Pima: insulin (feature 5) is the cell most often missing, glucose (2) one of the rarest
    let d = load_with("pima2", None, &delete).unwrap().data;
    let mask = d.missing().unwrap();
    let per = |j: usize| (0..d.len()).filter(|&i| mask.is_missing(i, j)).count();
    assert_eq!((per(4), per(1), per(3)), (374, 5, 227));
    assert_eq!(d.feature_names().get(4), "insulin");
}

/// The text corpus stays sparse through loading, names its features by the words of its
/// vocabulary file and its classes ham/spam, and spam is the +1 class of its natural task.
#[test]
fn the_text_corpus_loads_sparse_with_words_and_classes() {
    let (d, _) = load("spamassassin", None).unwrap();
    let Features::Sparse(x) = d.features() else {
        panic!("spamassassin should load sparse (CSR)")
    };
    assert_eq!(x.nnz(), 715_072);
    assert!(x.values().iter().all(|&v| v == 1.0), "binary word features");
    let words = d.feature_names().to_vec();
    // ordered by document frequency: the most frequent word first
    assert_eq!(&words[..3], ["the", "to", "and"]);
    assert!(
        words
            .iter()
            .all(|w| !w.is_empty() && w.len() <= 20 && w.bytes().all(|b| b.is_ascii_lowercase()))
    );
    let free = words.iter().position(|w| w == "free").unwrap();
    let t = binary_task(&d, &BinaryTask::Natural).unwrap();
    assert_eq!(t.class_names(), ["ham", "spam"]);
    let y = t.binary_labels().unwrap();
    // `free` is in a larger share of the spam than of the ham
    let share = |sign: bulwark_core::Sign| {
        let rows: Vec<usize> = (0..t.len()).filter(|&i| y[i] == sign).collect();
        let with = rows.iter().filter(|&&i| t.row(i).get(free) != 0.0).count();
        with as f64 / rows.len() as f64
    };
    assert!(
        share(bulwark_core::Sign::Pos) > 2.0 * share(bulwark_core::Sign::Neg),
        "free: spam {} ham {}",
        share(bulwark_core::Sign::Pos),
        share(bulwark_core::Sign::Neg)
    );
}

/// A vocabulary file that is missing, or whose word count differs from the columns, is a typed
/// error naming it.
#[test]
fn the_text_corpus_needs_its_vocabulary() {
    let repo = bulwark_data::repository_data_dir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("text")).unwrap();
    std::fs::copy(
        repo.join("text/spamassassin.svm.gz"),
        dir.path().join("text/spamassassin.svm.gz"),
    )
    .unwrap();
    let e = load("spamassassin", Some(dir.path())).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("text/spamassassin.vocab: not found")
            && text.contains("the feature names of `spamassassin`"),
        "{text}"
    );
    std::fs::write(dir.path().join("text/spamassassin.vocab"), "the\nto\n").unwrap();
    let text = err_text(load("spamassassin", Some(dir.path())));
    assert!(
        text.contains("spamassassin.vocab")
            && text.contains("2 feature names (one per line) for the 5239 features"),
        "{text}"
    );
}

#[test]
fn csv_bad_inputs_name_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    // missing file
    let e = load_path(&dir.path().join("nope.csv"), None).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    // empty file
    let p = write(&dir, "empty.csv", b"");
    let e = err_text(load_path(&p, None));
    assert!(e.contains("empty.csv") && e.contains("empty"), "{e}");
    // ragged row
    let e = err_text(parse_csv(b"label,a,b\nx,1,2\ny,3\n", "r.csv"));
    assert!(e.contains("r.csv:3") && e.contains("ragged"), "{e}");
    // non-numeric cell
    let e = err_text(parse_csv(b"label,a,b\nx,1,2\ny,3,abc\n", "n.csv"));
    assert!(
        e.contains("n.csv:3:3") && e.contains("field `b`") && e.contains("abc"),
        "{e}"
    );
    // infinities (NaN is a missing-value token: tests/missing.rs)
    for bad in ["inf", "-Infinity"] {
        let text = format!("label,a\nx,1\ny,{bad}\n");
        let e = parse_csv(text.as_bytes(), "f.csv").unwrap_err();
        assert!(matches!(e, Error::NonFinite { .. }), "{bad}: {e}");
        assert!(e.to_string().contains("f.csv:3:2"), "{e}");
    }
    // no label column
    let e = err_text(parse_csv(b"class,a\nx,1\n", "h.csv"));
    assert!(
        e.contains("h.csv:1") && e.contains("no `label` column"),
        "{e}"
    );
    // header only
    let e = err_text(parse_csv(b"label,a\n", "e.csv"));
    assert!(e.contains("no data rows"), "{e}");
    // truncated gzip
    let gz = gzip(b"label,a\nx,1\ny,2\n");
    let p = write(&dir, "t.csv.gz", &gz[..gz.len() / 2]);
    let e = err_text(load_path(&p, None));
    assert!(e.contains("t.csv.gz") && e.contains("gzip"), "{e}");
    // unknown format
    let p = write(&dir, "x.weird", b"label\n1\n");
    assert!(err_text(load_path(&p, None)).contains("unknown file format"));
}

#[test]
fn gzip_and_plain_csv_agree() {
    let text = b"label,a,b\nspam,1,2\nham,3,4.5\n";
    let dir = tempfile::tempdir().unwrap();
    let a = load_path(&write(&dir, "a.csv", text), None).unwrap();
    let b = load_path(&write(&dir, "b.csv.gz", &gzip(text)), None).unwrap();
    assert_eq!(a.features(), b.features());
    assert_eq!(a.class_names(), ["ham", "spam"]);
}

#[test]
fn single_class_in_a_binary_task() {
    let d = parse_csv(b"label,a\nx,1\nx,2\n", "one.csv").unwrap();
    let e = binary_task(&d, &BinaryTask::Natural).unwrap_err();
    // one class only: not a 2-class set, and a positive class gives a single-class task
    assert!(e.to_string().contains("one.csv"), "{e}");
    let e = binary_task(&d, &BinaryTask::Positive("x".into())).unwrap_err();
    assert!(matches!(e, Error::SingleClass { .. }), "{e}");
    let e = binary_task(&d, &BinaryTask::Positive("zzz".into())).unwrap_err();
    assert!(e.to_string().contains("zzz"), "{e}");
}

#[test]
fn class_subsets_keep_the_named_classes_in_the_given_order() {
    let d = parse_csv(b"label,a\nc,1\na,2\nb,3\nc,4\nd,5\n", "abc.csv").unwrap();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = class_subset(&d, &names(&["c", "a"])).unwrap();
    assert_eq!(s.class_names(), ["c", "a"]);
    assert_eq!(s.len(), 3);
    let got: Vec<(f64, usize)> = (0..s.len())
        .map(|i| (s.row(i).dot(&[1.0]), s.targets().class_index(i)))
        .collect();
    assert_eq!(got, [(1.0, 0), (2.0, 1), (4.0, 0)]);
    let e = class_subset(&d, &names(&["c", "zzz"])).unwrap_err();
    assert!(e.to_string().contains("zzz"), "{e}");
    for bad in [&["c"][..], &["c", "c"][..]] {
        let e = class_subset(&d, &names(bad)).unwrap_err();
        assert!(e.to_string().contains("two different classes"), "{e}");
    }
}

#[test]
fn libsvm_parsing_and_errors() {
    let d = parse_libsvm(b"+1 1:0.5 3:2\n-1 2:1 # comment\n\n+1\n", "s.svm", None).unwrap();
    assert_eq!((d.len(), d.n_features()), (3, 3));
    assert!(d.is_binary());
    assert!(matches!(d.features(), Features::Sparse(_)));
    let d01 = parse_libsvm(b"1 1:1\n0 2:1\n", "z.svm", None).unwrap();
    assert_eq!(d01.class_names(), ["0", "+1"]);
    let multi = parse_libsvm(b"3 1:1\n7 2:1\n5 1:2\n", "m.svm", None).unwrap();
    assert_eq!(multi.class_names(), ["3", "5", "7"]);

    let e = err_text(parse_libsvm(b"+1 1:1\n-1 0:2\n", "z.svm", None));
    assert!(e.contains("z.svm:2:4") && e.contains("index 0"), "{e}");
    let e = err_text(parse_libsvm(b"+1 3:1 2:1\n", "u.svm", None));
    assert!(e.contains("u.svm:1:8") && e.contains("unsorted"), "{e}");
    let e = err_text(parse_libsvm(b"+1 2:1 2:1\n", "d.svm", None));
    assert!(e.contains("d.svm:1") && e.contains("duplicate"), "{e}");
    let e = err_text(parse_libsvm(b"+1 2:x\n", "v.svm", None));
    assert!(e.contains("v.svm:1:4") && e.contains("`x`"), "{e}");
    let e = err_text(parse_libsvm(b"+1 2\n", "c.svm", None));
    assert!(e.contains("index:value"), "{e}");
    let e = err_text(parse_libsvm(b"yes 2:1\n", "l.svm", None));
    assert!(e.contains("l.svm:1:1") && e.contains("label"), "{e}");
    let e = parse_libsvm(b"+1 2:nan\n", "n.svm", None).unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
    let e = err_text(parse_libsvm(b"+1 5:1\n", "k.svm", Some(3)));
    assert!(e.contains("exceeds"), "{e}");
    let e = err_text(parse_libsvm(b"# only comments\n", "o.svm", None));
    assert!(e.contains("no examples"), "{e}");
    assert_eq!(
        Format::from_path(std::path::Path::new("a.libsvm.gz")),
        Some(Format::Libsvm)
    );
}

fn idx_images(count: u32, rows: u32, cols: u32, pixels: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0, 8, 3];
    for d in [count, rows, cols] {
        v.extend_from_slice(&d.to_be_bytes());
    }
    v.extend_from_slice(pixels);
    v
}

fn idx_labels(labels: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0, 8, 1];
    v.extend_from_slice(&(labels.len() as u32).to_be_bytes());
    v.extend_from_slice(labels);
    v
}

#[test]
fn idx_parsing_and_errors() {
    let img = idx_images(2, 2, 2, &[0, 255, 1, 2, 3, 4, 5, 6]);
    let d = parse_idx(&img, "i", &idx_labels(&[7, 1]), "l").unwrap();
    assert_eq!((d.len(), d.n_features()), (2, 4));
    assert_eq!(d.n_classes(), 8);
    assert_eq!(d.targets().class_index(0), 7);

    let mut bad_magic = img.clone();
    bad_magic[3] = 9;
    let e = err_text(parse_idx(&bad_magic, "imgs", &idx_labels(&[7, 1]), "l"));
    assert!(e.contains("imgs") && e.contains("magic"), "{e}");
    let e = err_text(parse_idx(
        &img[..img.len() - 1],
        "imgs",
        &idx_labels(&[7, 1]),
        "l",
    ));
    assert!(e.contains("shape mismatch"), "{e}");
    let e = err_text(parse_idx(&img, "imgs", &idx_labels(&[7]), "labs"));
    assert!(
        e.contains("labs") && e.contains("1 labels for 2 images"),
        "{e}"
    );
    let e = err_text(parse_idx(&img[..10], "imgs", &idx_labels(&[7]), "labs"));
    assert!(e.contains("truncated"), "{e}");

    // through the file loader: gzip images with the labels file beside them
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "t10k-images-idx3-ubyte.gz", &gzip(&img));
    write(
        &dir,
        "t10k-labels-idx1-ubyte.gz",
        &gzip(&idx_labels(&[7, 1])),
    );
    assert_eq!(load_path(&p, None).unwrap().len(), 2);
    let lonely = write(&dir, "other-images-idx3-ubyte", &img);
    assert!(matches!(
        load_path(&lonely, None),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn unknown_names_and_missing_builtins() {
    let e = load("mnist70k", None).unwrap_err();
    assert!(matches!(e, Error::UnknownDataset { .. }), "{e}");
    assert!(e.to_string().contains("wdbc, spambase"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = load("usps", Some(empty.path())).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("usps/usps_1100.csv.gz"), "{e}");
}
