//! The ID token checks of the board's sign-in, each against an issuer run by the test
//! (keys made here, served as a JWKS from 127.0.0.1): a token that passes, then one
//! with each flaw alone, so each test fails if the check it names is removed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::rp::{Rp, SignInError};
use super::OidcConfig;
use mcp_tasks_testkit::issuer::{now, TestIssuer, TestKey};
use serde_json::{json, Value};
use std::time::Duration;

const NONCE: &str = "the-nonce-of-this-sign-in";

fn rp(issuer: &TestIssuer) -> Rp {
    let mut config = OidcConfig::new("Test", &issuer.url, "board", "http://127.0.0.1:1");
    config.leeway = Duration::from_secs(60);
    Rp::new(config)
}

/// An ID token's claims for `ana`, changed by `edit`.
fn claims(issuer: &TestIssuer, edit: impl FnOnce(&mut Value)) -> Value {
    let mut c = json!({
        "iss": issuer.url, "aud": "board", "sub": "ana", "nonce": NONCE,
        "groups": ["release-managers"], "iat": now(), "exp": now() + 300,
    });
    edit(&mut c);
    c
}

/// Signs in with the provider handing out `token`.
async fn sign_in(rp: &Rp, issuer: &TestIssuer, token: String) -> Result<String, SignInError> {
    issuer.next_id_token(token);
    rp.finish("a-code", "a-verifier", NONCE)
        .await
        .map(|signed| {
            format!(
                "{} {}",
                signed.identity.principal,
                signed.identity.groups.join(",")
            )
        })
}

fn bad_token(result: Result<String, SignInError>) -> String {
    match result {
        Err(SignInError::BadToken(why)) => why,
        other => panic!("expected a refused token, got {other:?}"),
    }
}

#[tokio::test]
async fn a_good_id_token_signs_in_with_its_groups() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let who = sign_in(&rp, &issuer, key.sign(&claims(&issuer, |_| {}))).await;
    assert_eq!(who.unwrap(), "ana release-managers");
}

#[tokio::test]
async fn a_bad_signature_is_refused() {
    let key = TestKey::generate("k1");
    let forger = TestKey::generate("forger");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let forged = forger.sign_as("k1", &claims(&issuer, |_| {}));
    let why = bad_token(sign_in(&rp, &issuer, forged).await);
    assert!(why.contains("signature"), "{why}");
}

#[tokio::test]
async fn another_issuer_is_refused() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let token = key.sign(&claims(&issuer, |c| {
        c["iss"] = json!("https://evil.example")
    }));
    let why = bad_token(sign_in(&rp, &issuer, token).await);
    assert!(why.contains("another issuer"), "{why}");
}

#[tokio::test]
async fn another_audience_is_refused() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let token = key.sign(&claims(&issuer, |c| c["aud"] = json!("another-client")));
    let why = bad_token(sign_in(&rp, &issuer, token).await);
    assert!(why.contains("another audience"), "{why}");
}

#[tokio::test]
async fn expired_beyond_the_leeway_is_refused_within_it_accepted() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let expired = key.sign(&claims(&issuer, |c| c["exp"] = json!(now() - 120)));
    match sign_in(&rp, &issuer, expired).await {
        Err(SignInError::Clock(why)) => assert!(why.contains("expired"), "{why}"),
        other => panic!("expected a clock problem, got {other:?}"),
    }
    let late = key.sign(&claims(&issuer, |c| c["exp"] = json!(now() - 20)));
    assert!(sign_in(&rp, &issuer, late).await.is_ok());
}

#[tokio::test]
async fn another_nonce_is_refused() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let rp = rp(&issuer);
    let replayed = key.sign(&claims(&issuer, |c| c["nonce"] = json!("an-older-sign-in")));
    let why = bad_token(sign_in(&rp, &issuer, replayed).await);
    assert!(why.contains("nonce"), "{why}");
    let none = key.sign(&claims(&issuer, |c| {
        c.as_object_mut().unwrap().remove("nonce");
    }));
    assert!(bad_token(sign_in(&rp, &issuer, none).await).contains("nonce"));
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_accepted_an_unpublished_one_refused() {
    let old = TestKey::generate("k1");
    let new = TestKey::generate("k2");
    let never = TestKey::generate("k3");
    let issuer = TestIssuer::start(&[&old]).await;
    let rp = rp(&issuer).with_refetch_interval(Duration::ZERO);
    assert!(sign_in(&rp, &issuer, old.sign(&claims(&issuer, |_| {})))
        .await
        .is_ok());
    assert_eq!(issuer.jwks_fetches(), 1);
    // The provider rotates: it now signs with k2 and publishes only k2.
    issuer.publish(&[&new]);
    let who = sign_in(&rp, &issuer, new.sign(&claims(&issuer, |_| {}))).await;
    assert_eq!(who.unwrap(), "ana release-managers");
    assert_eq!(
        issuer.jwks_fetches(),
        2,
        "the unknown kid made the board fetch again"
    );
    // A key the provider does not publish, even after fetching again, is refused.
    let why = bad_token(sign_in(&rp, &issuer, never.sign(&claims(&issuer, |_| {}))).await);
    assert!(why.contains("does not publish"), "{why}");
    assert_eq!(issuer.jwks_fetches(), 3);
    // The old key is gone from the JWKS, and with it its tokens.
    let why = bad_token(sign_in(&rp, &issuer, old.sign(&claims(&issuer, |_| {}))).await);
    assert!(why.contains("does not publish"), "{why}");
}
