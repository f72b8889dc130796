//! The grounding pack (`--pack`): its buckets `norms_and_expectations` and
//! `constraints_and_rules`, each item with verified citations like `key_points`;
//! items without one move to `disputed_or_uncertain` with the reason (unverifiable
//! points and the model's unknowns too), and a policy or legal item with one source
//! is labelled single-source. The model is asked for `what_to_ask_user`.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, ResponseTemplate};

const SPACE: &str =
    "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission";
const TUN: &str = "tardigrades enter a dormant tun state called anhydrobiosis";
const ESA: &str = "as part of the TARDIS experiment run by the European Space Agency";

#[tokio::test]
async fn pack_buckets_keep_verified_items_and_move_the_rest() {
    let world = World::new().await;
    world.search_and_pages().await;
    let reply = json!({
        "answerable": true,
        "statements": [{"text": "Dried tardigrades survived open space on FOTON-M3.",
                        "citations": [{"source": 1, "quote": SPACE}]}],
        "unknowns": [],
        "what_to_ask_user": [],
        "norms_and_expectations": [
            {"text": "Dried tardigrades are expected to enter the tun state.",
             "citations": [{"source": 2, "quote": TUN}], "policy_or_legal": false},
            {"text": "It is customary to keep tardigrades in moss.",
             "citations": [{"source": 1, "quote": "keeping them in moss is customary"}], "policy_or_legal": false}
        ],
        "constraints_and_rules": [
            {"text": "The experiment ran under European Space Agency rules.",
             "citations": [{"source": 1, "quote": ESA}], "policy_or_legal": true},
            {"text": "Exposure lasted ten days, as the regulation required.",
             "citations": [{"source": 1, "quote": SPACE}, {"source": 2, "quote": TUN}], "policy_or_legal": false},
            {"text": "A permit is needed to send animals to space.",
             "citations": [], "policy_or_legal": true}
        ]
    });
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("norms_and_expectations"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&reply.to_string(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--pack", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pack: Value = serde_json::from_str(&world.scrub(&stdout(&out))).unwrap();

    let norms = pack["norms_and_expectations"].as_array().unwrap();
    assert_eq!(norms.len(), 1, "{norms:?}");
    assert_eq!(
        norms[0]["text"],
        "Dried tardigrades are expected to enter the tun state."
    );
    assert_eq!(norms[0]["sources"][0]["index"], 2);
    assert_eq!(norms[0]["quotes"][0]["text"], TUN);
    assert_eq!(norms[0]["policy_or_legal"], false);
    assert_eq!(norms[0]["single_source"], false);

    let rules = pack["constraints_and_rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(rules[0]["policy_or_legal"], true);
    assert_eq!(
        rules[0]["single_source"], true,
        "a policy item with one source"
    );
    assert_eq!(
        rules[1]["policy_or_legal"], true,
        "\"regulation\" reads like policy even unflagged"
    );
    assert_eq!(
        rules[1]["single_source"], false,
        "two sources: {:?}",
        rules[1]
    );
    assert_eq!(rules[1]["sources"].as_array().unwrap().len(), 2);

    assert_eq!(
        pack["disputed_or_uncertain"],
        json!([
            {"text": "It is customary to keep tardigrades in moss.",
             "reason": "the quoted text was not found in source 1", "bucket": "norms_and_expectations"},
            {"text": "A permit is needed to send animals to space.",
             "reason": "no citation", "bucket": "constraints_and_rules"}
        ])
    );
    assert_eq!(pack["key_points"].as_array().unwrap().len(), 1);

    // The request's schema bounds the buckets like the statements.
    let body: Value =
        serde_json::from_slice(&world.ollama.received_requests().await.unwrap()[0].body).unwrap();
    let bucket = &body["format"]["properties"]["constraints_and_rules"];
    assert_eq!(bucket["maxItems"], 3);
    assert_eq!(bucket["items"]["properties"]["citations"]["maxItems"], 2);
    assert!(
        body["format"]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("norms_and_expectations"))
    );
}

#[tokio::test]
async fn empty_buckets_when_the_model_gives_none() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--pack", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pack: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(pack["norms_and_expectations"], json!([]));
    assert_eq!(pack["constraints_and_rules"], json!([]));
    assert_eq!(pack["key_points"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_grounding_pack_moves_unverifiable_points_to_uncertain() {
    let world = World::new().await;
    world.search_and_pages().await;
    let reply = json!({
        "answerable": true,
        "statements": [
            {"text": "Dried tardigrades survived open space on FOTON-M3 in 2007.",
             "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days"}]},
            {"text": "Tardigrades can live on the Moon for a century.",
             "citations": [{"source": 2, "quote": "tardigrades have lived on the Moon for a hundred years"}]}
        ],
        "unknowns": ["How long they survive unshielded"],
        "what_to_ask_user": [{"q": "Do you mean low Earth orbit or deep space?", "why": "survival differs with radiation"}]
    });
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("what_to_ask_user"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&reply.to_string(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--pack", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pack = world.scrub(&stdout(&out));
    let pack: Value = serde_json::from_str(&pack).unwrap();
    assert_eq!(pack["grounded"], false, "one statement is not verified");
    assert_eq!(pack["key_points"].as_array().unwrap().len(), 1);
    assert_eq!(
        pack["key_points"][0]["sources"],
        json!([{"index": 1, "kind": "page", "url": "http://pages.test/pages/tardigrades-space.html", "title": "Tardigrades in space: the FOTON-M3 experiment"}])
    );
    assert_eq!(pack["key_points"][0]["confidence"], 1.0);
    assert_eq!(
        pack["disputed_or_uncertain"],
        json!([
            {"text": "Tardigrades can live on the Moon for a century.", "reason": "the quoted text was not found in source 2"},
            {"text": "How long they survive unshielded", "reason": "the sources do not settle this"}
        ])
    );
    assert_eq!(
        pack["what_to_ask_user"],
        json!([{"q": "Do you mean low Earth orbit or deep space?", "why": "survival differs with radiation"}])
    );
    // The request asked for the questions in its schema.
    let body: Value =
        serde_json::from_slice(&world.ollama.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(
        body["format"]["properties"]["what_to_ask_user"]["maxItems"],
        2
    );
}

#[tokio::test]
async fn pack_key_points_use_the_same_support_rule_as_answers() {
    let world = World::new().await;
    world.search_and_pages().await;
    let reply = json!({
        "answerable": true,
        "statements": [
            // True, with a garbled quote: ground's match supports it.
            {"text": "Dried tardigrades spent ten days in open space on the FOTON-M3 mission in September 2007.",
             "citations": [{"source": 1, "quote": "tardigrades flew on FOTON-M3 for ten days"}]},
            // A real quote for another number: supports nothing.
            {"text": "Dried tardigrades were exposed to open space for twelve days on the FOTON-M3 mission.",
             "citations": [{"source": 1, "quote": SPACE}]}
        ],
        "unknowns": [],
        "what_to_ask_user": [],
        "norms_and_expectations": [],
        "constraints_and_rules": []
    });
    world.model_replies(&reply.to_string()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--pack", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pack: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let points = pack["key_points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{pack}");
    assert_eq!(points[0]["support"], "match");
    assert_eq!(points[0]["sources"][0]["index"], 1);
    assert_eq!(points[0]["quotes"][0]["support"], "match");
    assert!(
        points[0]["quotes"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("In September 2007, dried tardigrades were exposed"),
        "{pack}"
    );
    let uncertain = pack["disputed_or_uncertain"].as_array().unwrap();
    assert_eq!(uncertain.len(), 1, "{pack}");
    assert_eq!(
        uncertain[0]["reason"],
        "the quoted text does not say what the statement says: the number 12 days is not in the quoted text"
    );
}
