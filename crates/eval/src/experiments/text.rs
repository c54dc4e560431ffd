//! `text`: DSX §4.2's protocol on real text (the SpamAssassin e-mails as words, uniform and MI
//! feature values).

use bulwark_core::{Dataset, Error};
use bulwark_data::{BinaryTask, binary_task};
use serde_json::json;

use super::curves::{ROBUST, absorb, quick_full, run_curves, spec_notes};
use super::{Outcome, base, load_builtin, log_grid};
use crate::curve::{AttackMode, CurveSpec, Scaling, Values};
use crate::experiment::{ExperimentResult, Mode, Observer, RunConfig};
use crate::learner::Learner;

/// The `text` experiment's protocol in one mode (exposed so tests can run a smaller one).
#[derive(Debug, Clone, PartialEq)]
pub struct TextConfig {
    /// The curve protocol; its `values` is set per study (uniform, then MI).
    pub spec: CurveSpec,
}

impl TextConfig {
    /// The configuration of a mode. Quick: three splits of 600 training, 300 validation and 1000
    /// test e-mails, the words in at least 15 of the 600 training e-mails (about 1000), four C
    /// values: each LP fit is a 600-example, ~1000-word LP (about a second with either the
    /// feature-space or the example-space interior-point method). Full: the DSX §4.2 protocol,
    /// ten splits, every word of the shipped vocabulary present in the training part, training
    /// capped at 2000 e-mails (as `spam`), six C values, eight budgets.
    pub fn for_mode(mode: Mode) -> Result<Self, Error> {
        Ok(Self {
            spec: CurveSpec {
                learners: Learner::lineup(&ROBUST)?,
                attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
                budgets: quick_full(
                    mode,
                    vec![0.0, 5.0, 10.0, 20.0, 40.0],
                    vec![0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0],
                ),
                grid: quick_full(mode, log_grid(-2, 1, 1), log_grid(-3, 2, 1)),
                splits: quick_full(mode, 3, 10),
                validation: 0.1,
                test: 0.3,
                caps: quick_full(
                    mode,
                    [Some(600), Some(300), Some(1000)],
                    [Some(2000), None, None],
                ),
                min_df: quick_full(mode, Some(15), None),
                scaling: Scaling::None,
                values: Values::Uniform,
                sparse: true,
            },
        })
    }
}

/// The words of `data` (binary features named by words) with the largest mutual information
/// with the label over the whole data set, with it (nats), largest first: the DSX §4.2 value
/// before normalisation (for a 0/1 feature the best threshold is the only one).
pub fn top_mi_words(data: &Dataset, k: usize) -> Result<Vec<(String, f64)>, Error> {
    let y = data.binary_labels()?;
    let m = data.len() as f64;
    let n = data.n_features();
    let (mut with_pos, mut with) = (vec![0usize; n], vec![0usize; n]);
    for i in 0..data.len() {
        for (j, v) in data.row(i).nonzeros() {
            if v != 0.0 {
                with[j] += 1;
                if y[i] == bulwark_core::Sign::Pos {
                    with_pos[j] += 1;
                }
            }
        }
    }
    let pos = y.iter().filter(|s| **s == bulwark_core::Sign::Pos).count();
    let term = |joint: usize, a: usize, b: usize| {
        if joint == 0 {
            0.0
        } else {
            let p = joint as f64 / m;
            p * (p * m * m / (a as f64 * b as f64)).ln()
        }
    };
    let mut scored: Vec<(String, f64)> = (0..n)
        .map(|j| {
            let (w, wp) = (with[j], with_pos[j]);
            let (without, neg) = (data.len() - w, data.len() - pos);
            let mi = term(wp, w, pos)
                + term(w - wp, w, neg)
                + term(pos - wp, without, pos)
                + term(neg - (w - wp), without, neg);
            (data.feature_names().get(j).into_owned(), mi.max(0.0))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(k);
    Ok(scored)
}

/// DSX §4.2's protocol on real text: the SpamAssassin public mail corpus as a binary bag of
/// words, spam = +1, LP, O2B, SVM and FDROP under greedy word deletion and corruption, once
/// with uniform feature values and once with MI values.
pub fn text_with(
    tc: &TextConfig,
    cfg: &RunConfig,
    obs: &dyn Observer,
) -> Result<ExperimentResult, Outcome> {
    let raw = load_builtin("spamassassin", cfg)?;
    let task = binary_task(&raw, &BinaryTask::Natural).map_err(Outcome::Failed)?;
    let top = top_mi_words(&task, 12).map_err(Outcome::Failed)?;
    let mut res = base(
        "text",
        "DSX 2010 §4.2's protocol (Fig. 3) on real text: SpamAssassin e-mails as words, deletion and corruption, uniform and MI values",
        cfg,
    );
    let uniform = tc.spec.clone();
    let mi = CurveSpec {
        values: Values::MutualInformation,
        ..tc.spec.clone()
    };
    res.protocol = spec_notes(&uniform, cfg.mode);
    res.protocol[2] = format!(
        "scaling {:?} (the features are 0/1 word indicators); feature values Uniform (task `uniform`) and MutualInformation on the training part (task `mi`, DSX §4.2); LP/O2B trained with the budget N they are attacked with; FDROP with the same values and budget N (features of total value at most N deleted; with unit values k = round(N) features)",
        uniform.scaling
    );
    let mut vocabulary = Vec::new();
    let mut studies = Vec::new();
    for (study, spec) in [("uniform", &uniform), ("mi", &mi)] {
        let mut r = base(study, "", cfg);
        run_curves(
            &format!("text/{study}"),
            &[(study.to_string(), task.clone())],
            spec,
            cfg,
            obs,
            &mut r,
        )?;
        if let Some(f) = r.summary.get("features") {
            vocabulary.push((f["min"].as_u64(), f["max"].as_u64()));
        }
        studies.push((study, r));
    }
    let (lo, hi) = (
        vocabulary.iter().filter_map(|v| v.0).min(),
        vocabulary.iter().filter_map(|v| v.1).max(),
    );
    let words_seen = match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} words in every split"),
        (Some(lo), Some(hi)) => format!("{lo} to {hi} words per split"),
        _ => "(not recorded by the cached units)".into(),
    };
    res.protocol.push(format!(
        "data: `spamassassin`, {} e-mails x {} words (words in at least 20 e-mails of the corpus; data/DATA.md), binary bag of words of subject and body, spam = +1 ({} spam, {} ham); the learners see {}: {words_seen}",
        task.len(),
        task.n_features(),
        task.class_counts().get("spam").copied().unwrap_or(0),
        task.class_counts().get("ham").copied().unwrap_or(0),
        match uniform.min_df {
            Some(k) => format!("the words in at least {k} e-mails of the training part"),
            None => "every word present in the training part".into(),
        }
    ));
    let describe = |mode: Mode| -> Result<String, Error> {
        let s = TextConfig::for_mode(mode)?.spec;
        let caps: Vec<String> = s
            .caps
            .iter()
            .map(|c| c.map_or("all".into(), |c| c.to_string()))
            .collect();
        Ok(format!(
            "{}: {} splits, caps train/validation/test {}, {}, C grid {:?}, budgets {:?}",
            mode.as_str(),
            s.splits,
            caps.join("/"),
            s.min_df
                .map_or("every word of the training part".into(), |k| format!(
                    "the words in at least {k} training e-mails"
                )),
            s.grid,
            s.budgets
        ))
    };
    res.protocol.push(format!(
        "the two modes — {}; {} (an LP fit costs about n^3/3 flops per interior-point iteration in the vocabulary n, or (2m)^3/3 in the training e-mails m when solved in example space: quick keeps both near 1000)",
        describe(Mode::Quick).map_err(Outcome::Failed)?,
        describe(Mode::Full).map_err(Outcome::Failed)?
    ));
    res.protocol.push(
        "N counts deleted words with uniform values; with MI values it is a sum of values (which sum to the number of words), so informative words cost more of it; the attack uses the same values for every learner, and attacks ham and spam alike (DSX §4)".into(),
    );
    res.protocol.push(format!(
        "the words with the largest MI with the label over the whole corpus: {}",
        top.iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for (study, r) in studies {
        absorb(&mut res, study, r);
    }
    res.grid = uniform.grid.clone();
    res.budgets = uniform.budgets.clone();
    res.repetitions = uniform.splits;
    res.summary = json!({
        "top_mi_words": top.iter().map(|(w, v)| json!({"word": w, "mi": v})).collect::<Vec<_>>(),
        "vocabulary": {"min": lo, "max": hi},
        "paper_claims": [
            "DSX §4.2 (spam, Fig. 3): the robust algorithms beat SVM under deletion and corruption and are roughly equal to TGRS; here on words of real e-mails instead of Spambase's 57 features",
        ],
    });
    Ok(res)
}

pub(super) fn text(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let tc = TextConfig::for_mode(cfg.mode).map_err(Outcome::Failed)?;
    text_with(&tc, cfg, obs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{CsrMatrix, Features, Sign};

    /// A word that is the label has the label's entropy as MI (ln 2 for balanced classes); a
    /// word independent of it has none; the list is sorted and named by the feature names.
    #[test]
    fn top_mi_words_ranks_the_label_word_first() {
        // 8 documents: `spammy` in exactly the spam, `common` in all, `half` in half of each
        let (mut indptr, mut indices) = (vec![0], Vec::new());
        for i in 0..8 {
            let spam = i < 4;
            for (j, present) in [spam, true, i % 2 == 0].into_iter().enumerate() {
                if present {
                    indices.push(j);
                }
            }
            indptr.push(indices.len());
        }
        let values = vec![1.0; indices.len()];
        let x = CsrMatrix::try_new(8, 3, indptr, indices, values).unwrap();
        let y = (0..8)
            .map(|i| if i < 4 { Sign::Pos } else { Sign::Neg })
            .collect();
        let d = Dataset::binary("w", Features::Sparse(x), y)
            .unwrap()
            .with_feature_names(vec!["spammy".into(), "common".into(), "half".into()])
            .unwrap();
        let top = top_mi_words(&d, 2).unwrap();
        assert_eq!(top.len(), 2);
        assert_eq!(top[0].0, "spammy");
        assert!(
            (top[0].1 - std::f64::consts::LN_2).abs() < 1e-12,
            "{}",
            top[0].1
        );
        // the other two carry no information; ties go alphabetically
        assert_eq!(top[1], ("common".to_string(), 0.0));
    }
}
