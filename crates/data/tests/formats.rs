//! Files as the field ships them: LIBLINEAR's own `heart_scale` (LIBSVM, no extension), compressed
//! with gzip, bzip2 or xz under names that say nothing, svmlight `qid:` tokens, formats told by
//! content, and the errors when neither the name nor the content says.

use std::io::Write;
use std::path::{Path, PathBuf};

use bulwark_core::{Dataset, Error, Features};
use bulwark_data::read::{Compression, decode};
use bulwark_data::{Format, load_path};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn heart_scale_bytes() -> Vec<u8> {
    std::fs::read(fixture("heart_scale")).unwrap()
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// xz by lzma-rs's encoder (valid xz, though its LZMA2 chunks are stored, not compressed).
fn xz_lzma_rs(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut &bytes[..], &mut out).unwrap();
    out
}

/// Real LZMA2 compression: the `xz` command-line tool's, else Python 3's `lzma` module (a fresh
/// machine has Python 3); a test failure when neither runs.
fn xz_cli(bytes: &[u8]) -> Vec<u8> {
    let tools: [(&str, &[&str]); 2] = [
        ("xz", &["-c", "-6"]),
        (
            "python3",
            &[
                "-c",
                "import lzma,sys; sys.stdout.buffer.write(lzma.compress(sys.stdin.buffer.read()))",
            ],
        ),
    ];
    for (tool, args) in tools {
        let Ok(mut child) = std::process::Command::new(tool)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            continue;
        };
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{tool} failed");
        return out.stdout;
    }
    panic!("neither `xz` nor `python3` runs: no real xz stream to test with")
}

fn err_text(r: bulwark_core::Result<Dataset>) -> String {
    r.expect_err("expected an error").to_string()
}

/// Same examples: features, labels and class names (the data set names differ: they are paths).
fn assert_same_data(a: &Dataset, b: &Dataset) {
    assert_eq!(a.features(), b.features());
    assert_eq!(a.targets(), b.targets());
    assert_eq!(a.class_names(), b.class_names());
}

/// The first line of heart_scale, parsed here by hand: the label and the 13 dense values.
fn first_line_of_heart_scale() -> (String, Vec<f64>) {
    let text = String::from_utf8(heart_scale_bytes()).unwrap();
    let line = text.lines().next().unwrap();
    let mut tokens = line.split_whitespace();
    let label = tokens.next().unwrap().to_string();
    let mut row = vec![0.0; 13];
    for t in tokens {
        let (i, v) = t.split_once(':').unwrap();
        row[i.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
    }
    (label, row)
}

#[test]
fn heart_scale_loads_by_content_as_270_by_13_binary() {
    let path = fixture("heart_scale");
    assert_eq!(Format::from_path(&path), None, "no extension to go by");
    assert_eq!(Format::sniff(&heart_scale_bytes()), Some(Format::Libsvm));
    let d = load_path(&path, None).unwrap();
    assert_eq!((d.len(), d.n_features()), (270, 13));
    assert!(d.is_binary());
    let counts: Vec<(String, usize)> = d.class_counts().into_iter().collect();
    assert_eq!(counts, vec![("+1".into(), 120), ("-1".into(), 150)]);
    let (label, row) = first_line_of_heart_scale();
    assert_eq!(label, "+1");
    assert_eq!(d.binary_labels().unwrap()[0].as_f64(), 1.0);
    assert_eq!(d.features().to_dense().row(0), &row[..]);
    // the first line has no feature 11: a zero
    assert_eq!(row[10], 0.0);
    assert_eq!(row[0], 0.708333);
    assert_eq!(row[12], -1.0);
}

#[test]
fn compressed_copies_without_extension_load_identically() {
    let plain = heart_scale_bytes();
    let reference = load_path(&fixture("heart_scale"), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut copies = vec![
        ("heart_scale_gzip", gzip(&plain), Compression::Gzip),
        ("heart_scale_bzip2", bzip2(&plain), Compression::Bzip2),
        ("heart_scale_xz", xz_lzma_rs(&plain), Compression::Xz),
    ];
    // pbzip2-style: one bzip2 stream per chunk, concatenated
    let half = plain.len() / 2;
    let multi_bz = [bzip2(&plain[..half]), bzip2(&plain[half..])].concat();
    copies.push(("heart_scale_pbzip2", multi_bz, Compression::Bzip2));
    // concatenated gzip members
    let multi_gz = [gzip(&plain[..half]), gzip(&plain[half..])].concat();
    copies.push(("heart_scale_gzip2", multi_gz, Compression::Gzip));
    // concatenated xz streams, the first followed by stream padding
    let multi_xz = [
        xz_lzma_rs(&plain[..half]),
        vec![0; 8],
        xz_lzma_rs(&plain[half..]),
    ]
    .concat();
    copies.push(("heart_scale_xz2", multi_xz, Compression::Xz));
    for (name, bytes, compression) in copies {
        assert_eq!(Compression::detect(&bytes), compression, "{name}");
        assert_ne!(bytes, plain);
        let p = write(&dir, name, &bytes);
        assert_eq!(Format::from_path(&p), None);
        let d = load_path(&p, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_same_data(&d, &reference);
        assert_eq!(decode(&bytes, name).unwrap(), plain, "{name}");
    }
}

/// Real LZMA2 compression (the `xz` tool's or Python's), one stream and two concatenated.
#[test]
fn xz_tool_output_without_extension_loads_identically() {
    let plain = heart_scale_bytes();
    let one = xz_cli(&plain);
    assert!(one.len() < plain.len() / 2, "really compressed");
    let reference = load_path(&fixture("heart_scale"), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = load_path(&write(&dir, "hs", &one), None).unwrap();
    assert_same_data(&d, &reference);
    let half = plain.len() / 2;
    let two = [xz_cli(&plain[..half]), xz_cli(&plain[half..])].concat();
    let d = load_path(&write(&dir, "hs2", &two), None).unwrap();
    assert_same_data(&d, &reference);
    // truncated: an error naming the file and the compression
    let e = err_text(load_path(&write(&dir, "cut", &one[..one.len() - 20]), None));
    assert!(
        e.contains("cut") && e.contains("corrupt or truncated xz stream"),
        "{e}"
    );
}

#[test]
fn qid_tokens_are_ignored_and_features_unchanged() {
    let text = String::from_utf8(heart_scale_bytes()).unwrap();
    let with_qid: String = text
        .lines()
        .enumerate()
        .map(|(k, line)| {
            let (label, rest) = line.split_once(' ').unwrap();
            format!("{label} qid:{} {rest}\n", k / 10 + 1)
        })
        .collect();
    assert!(with_qid.starts_with("+1 qid:1 1:0.708333 "));
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "heart_scale_qid", with_qid.as_bytes());
    assert_eq!(Format::sniff(with_qid.as_bytes()), Some(Format::Libsvm));
    let d = load_path(&p, None).unwrap();
    let reference = load_path(&fixture("heart_scale"), None).unwrap();
    assert_eq!((d.len(), d.n_features()), (270, 13));
    assert_same_data(&d, &reference);
}

#[test]
fn bad_qid_is_an_error_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "q.svm", b"+1 qid:3 1:0.5\n-1 qid:x 1:0.2\n");
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("q.svm:2:4") && e.contains("qid:x") && e.contains("integer"),
        "{e}"
    );
    let p = write(&dir, "r.svm", b"+1 qid:1.5 1:0.5\n");
    let e = err_text(load_path(&p, None));
    assert!(e.contains("r.svm:1:4") && e.contains("qid:1.5"), "{e}");
    // qid after a feature
    let p = write(&dir, "s.svm", b"+1 1:0.5 qid:2 2:1\n");
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("s.svm:1:10") && e.contains("right after the label"),
        "{e}"
    );
    // two qids
    let p = write(&dir, "t.svm", b"+1 qid:1 qid:2 2:1\n");
    let e = err_text(load_path(&p, None));
    assert!(e.contains("t.svm:1:10"), "{e}");
}

#[test]
fn csv_without_extension_is_sniffed() {
    let csv = b"label,a,b\nspam,1,2\nham,3,4.5\n";
    assert_eq!(Format::sniff(csv), Some(Format::Csv));
    let dir = tempfile::tempdir().unwrap();
    let d = load_path(&write(&dir, "table", csv), None).unwrap();
    assert_eq!((d.len(), d.n_features()), (2, 2));
    assert_eq!(d.feature_names().to_vec(), ["a", "b"]);
    assert_eq!(d.class_names(), ["ham", "spam"]);
    // and bzip2-compressed, still without extension
    let e = load_path(&write(&dir, "table_bz", &bzip2(csv)), None).unwrap();
    assert_same_data(&d, &e);
}

#[test]
fn explicit_format_overrides_a_misleading_extension() {
    let csv = b"label,a,b\nspam,1,2\nham,3,4.5\n";
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "x.txt", csv);
    assert_eq!(Format::from_path(&p), Some(Format::Libsvm));
    let d = load_path(&p, Some(Format::Csv)).unwrap();
    assert_eq!((d.len(), d.n_features()), (2, 2));
    // without it the name wins, and the error says what the content looks like
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("x.txt:1:1") && e.contains("looks like csv") && e.contains("--format csv"),
        "{e}"
    );
    // LIBSVM content named .csv, told by --format
    let p = write(&dir, "h.csv", &heart_scale_bytes());
    let d = load_path(&p, Some(Format::Libsvm)).unwrap();
    assert_eq!((d.len(), d.n_features()), (270, 13));
}

fn idx_images(images: &[[u8; 4]]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 3];
    for d in [images.len() as u32, 2, 2] {
        b.extend_from_slice(&d.to_be_bytes());
    }
    for im in images {
        b.extend_from_slice(im);
    }
    b
}

fn idx_labels(labels: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 1];
    b.extend_from_slice(&(labels.len() as u32).to_be_bytes());
    b.extend_from_slice(labels);
    b
}

#[test]
fn idx_is_sniffed_and_its_labels_found_beside_it() {
    let images = idx_images(&[[0, 255, 3, 4], [9, 8, 7, 6], [1, 1, 1, 1]]);
    let labels = idx_labels(&[7, 1, 7]);
    assert_eq!(Format::sniff(&images), Some(Format::Idx));
    assert_eq!(Format::sniff(&[0, 0, 8, 3]), Some(Format::Idx));
    assert_eq!(Format::sniff(&labels), None);
    let dir = tempfile::tempdir().unwrap();
    // the MNIST names, uncompressed
    let p = write(&dir, "foo-images-idx3-ubyte", &images);
    write(&dir, "foo-labels-idx1-ubyte", &labels);
    let reference = load_path(&p, None).unwrap();
    assert_eq!((reference.len(), reference.n_features()), (3, 4));
    assert_eq!(
        reference.features().to_dense().row(0),
        &[0.0, 255.0, 3.0, 4.0]
    );
    // names that say nothing of the format, gzip-compressed: told by content
    let p = write(&dir, "bar-images-idx3", &gzip(&images));
    write(&dir, "bar-labels-idx1", &gzip(&labels));
    assert_eq!(Format::from_path(&p), None);
    assert_same_data(&load_path(&p, None).unwrap(), &reference);
    // images gzip'd, labels plain beside them
    let p = write(&dir, "baz-images-idx3-ubyte.gz", &gzip(&images));
    write(&dir, "baz-labels-idx1-ubyte", &labels);
    assert_same_data(&load_path(&p, None).unwrap(), &reference);
    // images xz'd, labels bzip2'd
    let p = write(&dir, "qux-images-idx3-ubyte.xz", &xz_lzma_rs(&images));
    write(&dir, "qux-labels-idx1-ubyte.bz2", &bzip2(&labels));
    assert_same_data(&load_path(&p, None).unwrap(), &reference);
}

#[test]
fn idx_without_a_derivable_labels_name_says_what_was_expected() {
    let images = idx_images(&[[0, 255, 3, 4]]);
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "digits", &images);
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("digits")
            && e.contains("images-idx3")
            && e.contains("labels-idx1")
            && e.contains("labels file"),
        "{e}"
    );
    // a labels file given alone
    let p = write(&dir, "lonely", &idx_labels(&[1]));
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("lonely") && e.contains("IDX labels file") && e.contains("images"),
        "{e}"
    );
    // the images name is right but its labels file is missing
    let p = write(&dir, "a-images-idx3", &images);
    let e = load_path(&p, None).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("a-labels-idx1"), "{e}");
}

#[test]
fn unknown_content_names_the_file_and_the_format_flag() {
    let dir = tempfile::tempdir().unwrap();
    let binary: Vec<u8> = (0u32..200)
        .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert_eq!(Compression::detect(&binary), Compression::None);
    assert_eq!(Format::sniff(&binary), None);
    let p = write(&dir, "blob", &binary);
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("blob")
            && e.contains("unknown file format")
            && e.contains("--format csv|libsvm|idx")
            && e.contains("starts with the bytes"),
        "{e}"
    );
    for text in [
        &b"hello world\n1 2 3\n"[..],
        b"# a comment\n\n+1 1:0.5 word\n",
        b"+1 1:0.5 0:x\n",
        b"x 1:0.5\n",
        b"1;2;3\n",
    ] {
        assert_eq!(
            Format::sniff(text),
            None,
            "{}",
            String::from_utf8_lossy(text)
        );
        let p = write(&dir, "notes", text);
        let e = err_text(load_path(&p, None));
        assert!(
            e.contains("notes") && e.contains("--format") && e.contains("LIBSVM"),
            "{e}"
        );
    }
    // the same, compressed: the message says it was decompressed
    let p = write(&dir, "notes_bz", &bzip2(b"hello world\n"));
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("after bzip2 decompression") && e.contains("`hello world`"),
        "{e}"
    );
}

#[test]
fn sniffing_rules() {
    assert_eq!(Format::sniff(b"1 1:2 3:4"), Some(Format::Libsvm));
    assert_eq!(
        Format::sniff(b"\n# header\n  \n-1 qid:4 2:1e-3 # c\n"),
        Some(Format::Libsvm)
    );
    assert_eq!(Format::sniff(b"0\n1 1:1\n"), Some(Format::Libsvm));
    assert_eq!(
        Format::sniff(b"\xef\xbb\xbflabel,a\n1,2\n"),
        Some(Format::Csv)
    );
    assert_eq!(Format::sniff(b"a,label\r\n1,2\r\n"), Some(Format::Csv));
    assert_eq!(Format::sniff(b"1,2,3\n"), Some(Format::Csv));
    // `label` alone would be a CSV without features
    assert_eq!(Format::sniff(b"label\nx\n"), None);
    assert_eq!(Format::sniff(b""), None);
    assert_eq!(Format::sniff(b"\n\n# only comments\n"), None);
    assert_eq!(Format::sniff(b"1 a:2\n"), None);
    assert_eq!(Format::sniff(b"nan 1:2\n"), None);
}

#[test]
fn corrupt_compressed_streams_name_the_file_and_compression() {
    let dir = tempfile::tempdir().unwrap();
    // valid magic, then garbage
    let p = write(
        &dir,
        "corrupt",
        b"BZh91AY&SY this is not a bzip2 block at all",
    );
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("corrupt:") && e.contains("corrupt or truncated bzip2 stream"),
        "{e}"
    );
    // a real stream, cut short
    let bz = bzip2(&heart_scale_bytes());
    let p = write(&dir, "cut", &bz[..bz.len() / 2]);
    let e = err_text(load_path(&p, None));
    assert!(e.contains("cut:") && e.contains("bzip2"), "{e}");
    // the same for xz
    let xz = xz_lzma_rs(&heart_scale_bytes());
    let p = write(&dir, "cut_xz", &xz[..xz.len() - 30]);
    let e = err_text(load_path(&p, None));
    assert!(
        e.contains("cut_xz:") && e.contains("corrupt or truncated xz stream"),
        "{e}"
    );
    // streams that decompress to nothing
    for (name, bytes) in [
        ("empty_bz", bzip2(b"")),
        ("empty_xz", xz_lzma_rs(b"")),
        ("empty_gz", gzip(b"")),
    ] {
        let p = write(&dir, name, &bytes);
        let e = err_text(load_path(&p, None));
        assert!(
            e.contains(name) && e.contains("decompresses to an empty file"),
            "{e}"
        );
    }
}

#[test]
fn format_names_parse_and_print() {
    for f in [Format::Csv, Format::Libsvm, Format::Idx] {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!("csv".parse::<Format>().unwrap(), Format::Csv);
    assert_eq!("libsvm".parse::<Format>().unwrap(), Format::Libsvm);
    assert_eq!("IDX".parse::<Format>().unwrap(), Format::Idx);
    let e = "arff".parse::<Format>().unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("arff") && msg.contains("csv, libsvm, idx"),
        "{msg}"
    );
    assert_eq!(
        serde_json::to_string(&[Format::Csv, Format::Libsvm, Format::Idx]).unwrap(),
        r#"["csv","libsvm","idx"]"#
    );
}

#[test]
fn extension_guess_strips_every_compression_suffix() {
    for (name, f) in [
        ("a.csv.bz2", Some(Format::Csv)),
        ("a.CSV.XZ", Some(Format::Csv)),
        ("a.svm.xz", Some(Format::Libsvm)),
        ("a.txt.gz", Some(Format::Libsvm)),
        ("t10k-images-idx3-ubyte.bz2", Some(Format::Idx)),
        ("heart_scale", None),
        ("heart_scale.bz2", None),
    ] {
        assert_eq!(Format::from_path(Path::new(name)), f, "{name}");
    }
}

#[test]
fn features_stay_sparse_for_libsvm() {
    let d = load_path(&fixture("heart_scale"), None).unwrap();
    assert!(matches!(d.features(), Features::Sparse(_)));
}

/// A 29-byte file whose largest index declares two billion features loads with two rows and
/// three stored values: no per-feature state (names are computed when shown).
#[test]
fn a_declared_dimension_costs_no_memory_per_feature() {
    let d =
        bulwark_data::parse_libsvm(b"+1 1:0.5 2000000000:1\n-1 1:2\n", "big.svm", None).unwrap();
    assert_eq!(
        (d.len(), d.n_features(), d.features().nnz()),
        (2, 2_000_000_000, 3)
    );
    assert!(d.feature_names().given().is_none());
    assert_eq!(d.feature_names().get(1_999_999_999), "x2000000000");
}

/// A line longer than the limit is a typed error naming the file and line, in CSV and LIBSVM,
/// plain or compressed, found without reading the rest of the line.
#[test]
fn a_line_longer_than_the_limit_is_a_typed_error() {
    use bulwark_data::read::Compression;
    use bulwark_data::{ReadOptions, csvfile::read_csv, libsvm::read_libsvm};
    let long = format!("label,a\n1,2\n1,{}\n", "3".repeat(100));
    let options = ReadOptions {
        max_line_bytes: 64,
        ..ReadOptions::default()
    };
    let e = read_csv(long.as_bytes(), Compression::None, "t.csv", &options).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("t.csv:3: a line of more than 64 bytes would need"),
        "{e}"
    );
    // the same line is fine under a larger limit
    assert!(
        read_csv(
            long.as_bytes(),
            Compression::None,
            "t.csv",
            &ReadOptions::default()
        )
        .is_ok()
    );
    let svm = format!("+1 1:1\n-1 1:{}\n", "1".repeat(100));
    let e = read_libsvm(svm.as_bytes(), Compression::Gzip, "t.svm", None, 64).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("t.svm:2: a line of more than 64 bytes (after gzip decompression)"),
        "{e}"
    );
    // through a file: one endless line inside gzip stops at the limit
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "endless.csv.gz",
        &gzip(format!("label,a\n1,{}", "7".repeat(1 << 20)).as_bytes()),
    );
    let e = bulwark_data::load_path_with(
        &path,
        &ReadOptions {
            max_line_bytes: 4096,
            ..ReadOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains(
            "endless.csv.gz:2: a line of more than 4096 bytes (after gzip decompression)"
        ),
        "{e}"
    );
}

/// IDX headers: no images, and sizes whose product overflows, are errors, not allocations.
#[test]
fn idx_headers_that_declare_nothing_or_too_much_are_refused() {
    let mut images = vec![0, 0, 8, 3];
    for d in [0u32, 65535, 65535] {
        images.extend_from_slice(&d.to_be_bytes());
    }
    let labels = [0u8, 0, 8, 1, 0, 0, 0, 0];
    let e = bulwark_data::parse_idx(&images, "i", &labels, "l").unwrap_err();
    assert!(e.to_string().contains("0 images"), "{e}");
    let mut images = vec![0, 0, 8, 3];
    for d in [u32::MAX, u32::MAX, u32::MAX] {
        images.extend_from_slice(&d.to_be_bytes());
    }
    let e = bulwark_data::parse_idx(&images, "i", &labels, "l").unwrap_err();
    assert!(
        e.to_string().contains("more than 2^64 bytes, file has 16"),
        "{e}"
    );
    // a stream is read no further than its header declares, plus one byte
    let mut declared = vec![0, 0, 8, 1, 0, 0, 0, 2, 5, 6];
    declared.extend(std::iter::repeat_n(9, 1000));
    let read = bulwark_data::idx::read_idx_bytes(&declared[..], "l", 1).unwrap();
    assert_eq!(read.len(), 11);
}
